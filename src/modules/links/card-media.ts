import { createHash } from 'node:crypto';
import { mediaRefHash } from '../cards/media-ref.js';

/**
 * The media a card names, found the same way on both sides: every string that is a media
 * reference (`yoto:#<hash>`, `service:#<hash>`) under a `trackUrl` key is audio, under an
 * `icon16x16` key an icon; the cover is `metadata.cover.imageL`, a URL.
 */
export type MediaKind = 'audio' | 'icon';

export interface MediaSlot {
  kind: MediaKind;
  /** The hash the reference names. */
  hash: string;
  /** Where it sits in the card, as keys from the root. */
  path: (string | number)[];
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const KIND_OF_KEY: Record<string, MediaKind> = { trackUrl: 'audio', icon16x16: 'icon' };

/** Every media reference of a card document, in document order. */
export function mediaSlots(doc: unknown): MediaSlot[] {
  const slots: MediaSlot[] = [];
  const walk = (value: unknown, path: (string | number)[]): void => {
    if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, [...path, i]));
    } else if (value && typeof value === 'object') {
      for (const [key, v] of Object.entries(value)) {
        const kind = KIND_OF_KEY[key];
        const ref = kind && typeof v === 'string' ? mediaRefHash(v) : undefined;
        if (kind && ref) slots.push({ kind, hash: ref, path: [...path, key] });
        else walk(v, [...path, key]);
      }
    }
  };
  walk(doc, []);
  return slots;
}

/** The value at `path` of `doc`, or undefined. */
export function valueAt(doc: unknown, path: readonly (string | number)[]): unknown {
  let value: unknown = doc;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value;
}

/** Sets the value at `path` (which exists) of `doc`. */
export function setAt(doc: unknown, path: readonly (string | number)[], value: Json): void {
  const parent = valueAt(doc, path.slice(0, -1)) as Record<string | number, Json>;
  parent[path[path.length - 1] as string | number] = value;
}

/** Where a card may name its cover, a URL (the interface has `cover.imageL` in both). */
const COVER_PATHS = [
  ['metadata', 'cover', 'imageL'],
  ['content', 'cover', 'imageL'],
] as const;

/** The cover URLs a card names (http(s) only), with where each sits. */
export function coverSlots(doc: unknown): { path: readonly string[]; url: string }[] {
  return COVER_PATHS.flatMap((path) => {
    const url = valueAt(doc, path);
    return typeof url === 'string' && /^https?:\/\//i.test(url) ? [{ path, url }] : [];
  });
}

/**
 * A card's fingerprint: the SHA-256 of its JSON with keys in a fixed order, so the same card
 * read twice (by any instance) has the same one, and any change to it another.
 */
export function fingerprint(card: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
      );
    }
    return value;
  };
  return createHash('sha256').update(JSON.stringify(canonical(card))).digest('hex');
}

/** The fields a copy leaves behind: who owns the card and when it was made are the side's own. */
const OWN_FIELDS = ['cardId', 'userId', 'createdAt', 'updatedAt', 'deleted', 'sortkey'];

/** A card document without the fields that belong to the side it is on. */
export function portable(card: Record<string, unknown>): Record<string, Json> {
  const copy = structuredClone(card) as Record<string, Json>;
  for (const field of OWN_FIELDS) delete copy[field];
  return copy;
}
