import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { renderAnswer, spliced } from '../../src/shared/render-answer.js';
import { renderWishlist } from '../../src/modules/wishlists/rules.js';
import { SharedWishlist, Wishlist } from '../../src/modules/wishlists/schemas.js';

describe('renderAnswer', () => {
  const Shape = Type.Object({ doc: Type.Array(Type.Number()), note: Type.Optional(Type.String()), id: Type.String(), gone: Type.Union([Type.String(), Type.Null()]) });

  it("renders the schema's members in its order, spliced text as it is, undefined ones left out", () => {
    const json = renderAnswer(Shape, { id: 'a"b', gone: null, doc: spliced('[1, 2]'), note: undefined });
    expect(json).toBe('{"doc":[1, 2],"id":"a\\"b","gone":null}');
    expect(Value.Check(Shape, JSON.parse(json))).toBe(true);
  });

  it('renders nothing it is given beyond the schema', () => {
    const values = { id: 'x', gone: 'y', doc: [3], extra: 1 };
    expect(renderAnswer(Shape, values)).toBe('{"doc":[3],"id":"x","gone":"y"}');
  });
});

describe('renderWishlist', () => {
  const ids = { shareId: 'S'.repeat(21), userId: 'auth0|u', wishlistId: 'W'.repeat(21) };

  it('is the Wishlist schema, with no name when it has none', () => {
    const json = renderWishlist('[{"item":"c1","kept":true}]', { ...ids, name: null });
    expect(JSON.parse(json)).toEqual({ content: [{ item: 'c1', kept: true }], ...ids });
    expect(Value.Check(Wishlist, JSON.parse(json))).toBe(true);
    expect(JSON.parse(renderWishlist('[]', { ...ids, name: 'Birthday' })).name).toBe('Birthday');
  });

  it("is the SharedWishlist schema with the owner's name, null included", () => {
    for (const ownerName of ['Sam', null]) {
      const parsed: unknown = JSON.parse(renderWishlist('[]', { ...ids, ownerName }));
      expect(parsed).toEqual({ content: [], ...ids, ownerName });
      expect(Value.Check(SharedWishlist, parsed)).toBe(true);
    }
  });
});
