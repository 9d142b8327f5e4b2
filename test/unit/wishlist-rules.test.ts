import { describe, expect, it } from 'vitest';
import type { RawJson } from '../../src/shared/raw-json.js';
import { AppError } from '../../src/shared/errors.js';
import { checkWishlistLimit, checkWishlistSize, renderWishlist, wishlistBytes, wishlistMedia } from '../../src/modules/wishlists/rules.js';
import { MAX_WISHLIST_BYTES } from '../../src/modules/wishlists/schemas.js';

const IDS = { shareId: 'S'.repeat(21), userId: 'auth0|alice', wishlistId: 'W'.repeat(21) };

function sizeError(json: string): AppError | undefined {
  try {
    checkWishlistSize(json);
    return undefined;
  } catch (err) {
    return err as AppError;
  }
}

describe('renderWishlist', () => {
  it('is the JSON of {content, shareId, userId, wishlistId}, in that order', () => {
    const content = [{ item: 'abcde', note: 'é "q" 🎵', n: 1 }];
    const json = renderWishlist(JSON.stringify(content), IDS);
    expect(json).toBe(JSON.stringify({ content, ...IDS }));
    expect(Object.keys(JSON.parse(json))).toEqual(['content', 'shareId', 'userId', 'wishlistId']);
  });

  it('takes only the three ids, whatever else the object carries, in its own order', () => {
    const messy = { wishlistId: 'w', extra: 'no', userId: 'u', shareId: 's' } as typeof IDS;
    expect(JSON.parse(renderWishlist('[]', messy))).toEqual({ content: [], shareId: 's', userId: 'u', wishlistId: 'w' });
    expect(Object.keys(JSON.parse(renderWishlist('[]', messy)))).toEqual(['content', 'shareId', 'userId', 'wishlistId']);
  });

  it('escapes ids that need it', () => {
    const json = renderWishlist('[]', { ...IDS, userId: 'auth0|"quoted"\\' });
    expect(JSON.parse(json).userId).toBe('auth0|"quoted"\\');
  });
});

describe('the size rule', () => {
  it('is 300 KiB', () => {
    expect(MAX_WISHLIST_BYTES).toBe(300 * 1024);
  });

  it('counts UTF-8 bytes', () => {
    expect(wishlistBytes('abc')).toBe(3);
    expect(wishlistBytes('é')).toBe(2);
    expect(wishlistBytes('🎵')).toBe(4);
  });

  it('accepts exactly 307,200 bytes and refuses 307,201 with wishlist-size', () => {
    expect(sizeError('a'.repeat(MAX_WISHLIST_BYTES))).toBeUndefined();
    const error = sizeError('a'.repeat(MAX_WISHLIST_BYTES + 1));
    expect(error).toBeInstanceOf(AppError);
    expect(error?.code).toBe('wishlist-size');
    expect(error?.statusCode).toBe(400);
  });

  it('refuses by bytes, not characters', () => {
    // 153,601 two-byte characters: 307,202 bytes, but only half as many characters
    expect(sizeError('é'.repeat(MAX_WISHLIST_BYTES / 2))).toBeUndefined();
    expect(sizeError('é'.repeat(MAX_WISHLIST_BYTES / 2 + 1))?.code).toBe('wishlist-size');
  });
});

describe('checkWishlistLimit', () => {
  it.each([0, 1, 9])('lets a user holding %i wishlists make one more', (held) => {
    expect(() => checkWishlistLimit(held)).not.toThrow();
  });
  it.each([10, 11])('refuses one more to a user holding %i: 400 wishlist-limit', (held) => {
    expect(() => checkWishlistLimit(held)).toThrow(expect.objectContaining({ code: 'wishlist-limit', statusCode: 400 }));
  });
});

describe('wishlistMedia', () => {
  const sorted = (set: Set<string> | undefined): string[] => [...(set ?? [])].sort();

  it('names each card beside the references of its elements, in one wishlist or a list of them', () => {
    const one = renderWishlist(JSON.stringify([
      { item: 'c0001', icon: 'service:#h1', more: { list: ['yoto:#h2'] } },
      { item: 'c0001', icon: 'yoto:#h3' },
      { item: 'c0002', note: 'no reference' },
      { item: 'c0003', note: 'see service:#h4' },
    ]), IDS);
    for (const json of [one, `{"wishlists":[${one},${renderWishlist('[{"item":"c0004","x":"service:#h5"}]', IDS)}]}` as RawJson]) {
      const media = wishlistMedia(json);
      expect(sorted(media.byItem.get('c0001'))).toEqual(['h1', 'h2', 'h3']);
      expect(media.byItem.has('c0002')).toBe(false);
      expect(media.byItem.has('c0003')).toBe(false);
    }
    const list = wishlistMedia(`{"wishlists":[${one},${renderWishlist('[{"item":"c0004","x":"service:#h5"}]', IDS)}]}` as RawJson);
    expect(sorted(list.hashes)).toEqual(['h1', 'h2', 'h3', 'h5']);
    expect(sorted(list.byItem.get('c0004'))).toEqual(['h5']);
  });

  it('finds nothing in a wishlist without references', () => {
    const media = wishlistMedia(renderWishlist('[{"item":"c0001"}]', IDS));
    expect(media.hashes.size).toBe(0);
    expect(media.byItem.size).toBe(0);
  });
});
