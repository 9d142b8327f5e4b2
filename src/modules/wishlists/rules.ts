import { AppError } from '../../shared/errors.js';
import type { Static } from '@sinclair/typebox';
import type { WishlistRow } from '../../db/database.js';
import type { RawJson } from '../../shared/raw-json.js';
import { renderAnswer, spliced } from '../../shared/render-answer.js';
import { SharedWishlist, Wishlist, type WishlistBody } from './schemas.js';
import { collectMediaRefHashes, mayHoldMediaRef } from '../cards/media-ref.js';

/** The rules of a wishlist's stored form (DECISIONS.md, "Wishlists"), as pure functions. */

export const MAX_WISHLISTS_PER_USER = 10;
/** 300 KiB: the largest stored wishlist, as UTF-8 JSON. */
export const MAX_WISHLIST_BYTES = 307_200;

/** The longest wishlist name, in characters (Unicode code points, as JSON Schema counts them). */
export const MAX_WISHLIST_NAME_LENGTH = 100;

/**
 * What the owner sets on a wishlist besides its content, as stored (null: not set). Each is
 * optional on the wire: a body that leaves one out keeps what the wishlist has, and an answer
 * leaves out one not set. The service carries them as one value, so a label added here (with its
 * column, its schema member and its statements) needs nothing of it.
 */
export type WishlistLabels = Pick<WishlistRow, 'name'>;

/** A new wishlist's labels: none set. */
export const NO_LABELS: WishlistLabels = { name: null };

/** The labels of a stored row. */
export const labelsOf = (row: WishlistLabels): WishlistLabels => ({ name: row.name });

/**
 * The labels a body sets, each through its rule, on top of those the wishlist has (`current`, or
 * none for a new one): a label the body leaves out keeps its value.
 */
export function labelsAfter(body: WishlistBody, current: WishlistLabels = NO_LABELS): WishlistLabels {
  const name = wishlistName(body.name);
  return { ...current, ...(name === undefined ? {} : { name }) };
}

/**
 * A wishlist answer's members besides its content, as the schema has them (schemas.ts), with the
 * labels as stored (null or absent: not set, and the answer then leaves the member out) and the shared
 * view's `ownerName` (null: the owner has no display name), which is never stored.
 */
export type WishlistFields = Omit<Static<typeof Wishlist>, 'content' | keyof WishlistLabels> &
  Partial<WishlistLabels> & { ownerName?: string | null };

/**
 * The wishlist as stored and returned, from the content's JSON text spliced as it is: the members
 * of the `Wishlist` schema (the `SharedWishlist` one with an `ownerName`) in their order. A
 * wishlist with no labels answers the interface's shape exactly.
 */
export function renderWishlist(contentJson: string, fields: WishlistFields): RawJson {
  const { ownerName, ...rest } = fields;
  const values: Record<string, unknown> = { content: spliced(contentJson) };
  // A label not set (null) is left out: the schema's members are optional strings, not nullable.
  for (const [key, value] of Object.entries(rest)) values[key] = value ?? undefined;
  return ownerName === undefined
    ? renderAnswer(Wishlist, values as Static<typeof Wishlist>)
    : renderAnswer(SharedWishlist, { ...values, ownerName } as Static<typeof SharedWishlist>);
}

/**
 * The name rule: a name sent is trimmed; blank (or null) clears it; longer than 100 characters is
 * 400 `bad-request`. Not sent (undefined) stays undefined: the caller keeps the name it has.
 */
export function wishlistName(sent: string | null | undefined): string | null | undefined {
  if (sent == null) return sent;
  const name = sent.trim();
  const length = [...name].length;
  if (length > MAX_WISHLIST_NAME_LENGTH) {
    throw new AppError('bad-request', `a wishlist name can be at most ${MAX_WISHLIST_NAME_LENGTH} characters; this one has ${length}`);
  }
  return name === '' ? null : name;
}

/** The size the limit applies to: UTF-8 bytes of the stored wishlist's JSON. */
export const wishlistBytes = (json: string): number => Buffer.byteLength(json, 'utf8');

/**
 * The count rule: a user holds at most 10 wishlists; one more is 400 `wishlist-limit`. The caller
 * counts under the user's lock, so the rule holds under concurrent creates across instances.
 */
export function checkWishlistLimit(held: number): void {
  if (held >= MAX_WISHLISTS_PER_USER) {
    throw new AppError('wishlist-limit', `a user can have at most ${MAX_WISHLISTS_PER_USER} wishlists`);
  }
}

/** The size rule: at most 300 KiB (307,200 bytes); over that, 400 `wishlist-size`. */
export function checkWishlistSize(json: string): void {
  const bytes = wishlistBytes(json);
  if (bytes > MAX_WISHLIST_BYTES) {
    throw new AppError(
      'wishlist-size',
      `a wishlist can be at most ${MAX_WISHLIST_BYTES} bytes (300 KiB) of JSON; this one is ${bytes}`,
    );
  }
}

/** The media references of a wishlist answer, and the card each element names beside them. */
export interface WishlistMedia {
  hashes: Set<string>;
  /** For each card an element names (`item`), the hashes of the references inside that element. */
  byItem: Map<string, Set<string>>;
}

/** The media references of a wishlist answer: one wishlist, or `{"wishlists": [...]}`. */
export function wishlistMedia(json: RawJson): WishlistMedia {
  const media: WishlistMedia = { hashes: new Set(), byItem: new Map() };
  if (!mayHoldMediaRef(json)) return media;
  const parsed = JSON.parse(json) as { wishlists?: { content: Record<string, unknown>[] }[]; content?: Record<string, unknown>[] };
  for (const wishlist of parsed.wishlists ?? [parsed]) {
    for (const element of wishlist.content ?? []) {
      const refs = new Set<string>();
      collectMediaRefHashes(element, refs);
      if (refs.size === 0) continue;
      refs.forEach((h) => media.hashes.add(h));
      if (typeof element.item !== 'string') continue;
      const beside = media.byItem.get(element.item) ?? new Set();
      refs.forEach((h) => beside.add(h));
      media.byItem.set(element.item, beside);
    }
  }
  return media;
}
