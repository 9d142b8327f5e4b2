import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/shared/errors.js';
import { checkWishlistLimit, checkWishlistSize, renderWishlist, wishlistBytes } from '../../src/modules/wishlists/rules.js';
import { MAX_WISHLIST_BYTES } from '../../src/modules/wishlists/rules.js';

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
