import { AppError } from '../../shared/errors.js';
import type { RawJson } from '../../shared/raw-json.js';
import { collectMediaRefHashes, mayHoldMediaRef } from '../cards/media-ref.js';
import { MAX_WISHLIST_BYTES, MAX_WISHLISTS_PER_USER } from './schemas.js';

/** The rules of a wishlist's stored form (DECISIONS.md, "Wishlists"), as pure functions. */

export interface WishlistIds {
  shareId: string;
  userId: string;
  wishlistId: string;
}

/**
 * The wishlist as stored and returned, `{"content", "shareId", "userId", "wishlistId"}`, from the
 * content's JSON text: the same text as `JSON.stringify({content, shareId, userId, wishlistId})`.
 */
export function renderWishlist(contentJson: string, ids: WishlistIds): RawJson {
  const { shareId, userId, wishlistId } = ids;
  return `{"content":${contentJson},${JSON.stringify({ shareId, userId, wishlistId }).slice(1)}` as RawJson;
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
