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

/** Adds to `into` the hash of every string in `value` (parsed JSON) that is a media reference, whole, at any depth. */
export function collectMediaRefHashes(value: unknown, into: Set<string>): void {
  if (typeof value === 'string') {
    const hash = mediaRefHash(value);
    if (hash !== undefined) into.add(hash);
  } else if (Array.isArray(value)) {
    for (const item of value) collectMediaRefHashes(item, into);
  } else if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) collectMediaRefHashes(item, into);
  }
}

/**
 * The hashes of every media reference in the JSON text `json` (what a signer would turn into
 * URLs), without a parse when it holds none.
 */
export function mediaRefHashesIn(json: string): Set<string> {
  const hashes = new Set<string>();
  if (mayHoldMediaRef(json)) collectMediaRefHashes(JSON.parse(json), hashes);
  return hashes;
}
