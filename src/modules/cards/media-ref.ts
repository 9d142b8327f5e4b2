/**
 * Media references (DECISIONS.md, "Cards"): `service:#<hash>`, or `yoto:#<hash>`, the public
 * service's own prefix, which its clients compose after an upload. Both name the same stored
 * media (the hash); a card keeps the reference as the client wrote it.
 */

export const MEDIA_REF_PREFIXES = ['service:#', 'yoto:#'] as const;

/** A media reference, unanchored (to build patterns from); the hash has no white space and no `#`. */
export const MEDIA_REF_SOURCE = '(?:service|yoto):#[^\\s#]+';

/** A whole string that is a media reference. */
export const MEDIA_REF_PATTERN = `^${MEDIA_REF_SOURCE}$`;

const MEDIA_REF = new RegExp(MEDIA_REF_PATTERN);

/** The hash a media reference names, or undefined when `value` is not a media reference. */
export function mediaRefHash(value: string): string | undefined {
  if (!MEDIA_REF.test(value)) return undefined;
  return value.slice(value.indexOf('#') + 1);
}

/** Whether `text` may hold a media reference at all (a cheap test before a parse). */
export function mayHoldMediaRef(text: string): boolean {
  return MEDIA_REF_PREFIXES.some((prefix) => text.includes(prefix));
}
