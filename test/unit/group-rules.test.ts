import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/shared/errors.js';
import {
  checkGroupLimit,
  cleanGroupItems,
  cleanGroupName,
  groupImageUrl,
  modificationTime,
  visibleItems,
} from '../../src/modules/groups/rules.js';

describe('cleanGroupName', () => {
  it('keeps a name of up to 100 characters as it is', () => {
    expect(cleanGroupName('Bedtime')).toBe('Bedtime');
    expect(cleanGroupName(' padded ')).toBe(' padded ');
    const hundred = 'a'.repeat(99) + 'z';
    expect(cleanGroupName(hundred)).toBe(hundred);
  });

  it('cuts a longer name to its first 100 characters', () => {
    const long = Array.from({ length: 130 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const cut = cleanGroupName(long);
    expect(cut).toHaveLength(100);
    expect(long.startsWith(cut)).toBe(true);
  });

  it('counts characters (code points), so a surrogate pair is never split', () => {
    const name = 'x' + '🎵'.repeat(150);
    const cut = cleanGroupName(name);
    expect(Array.from(cut)).toHaveLength(100);
    expect(cut).toBe('x' + '🎵'.repeat(99));
    expect(cut.length).toBe(1 + 99 * 2);
  });

  it.each([[''], [' '], ['\t\n  ']])('refuses an empty or blank name %j with bad-request', (name) => {
    let error: unknown;
    try {
      cleanGroupName(name);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('bad-request');
    expect((error as AppError).statusCode).toBe(400);
  });
});

describe('cleanGroupItems', () => {
  const AT = '2026-01-02T03:04:05.006Z';
  const EARLIER = '2025-12-31T23:59:59.999Z';
  const ids = (xs: string[]) => xs.map((contentId) => ({ contentId }));

  it('keeps the order of the items given', () => {
    const held = new Set(['a', 'b', 'c']);
    expect(cleanGroupItems(ids(['c', 'a', 'b']), held, [], AT)).toEqual([
      { contentId: 'c', addedAt: AT },
      { contentId: 'a', addedAt: AT },
      { contentId: 'b', addedAt: AT },
    ]);
  });

  it('drops duplicates, keeping the first occurrence', () => {
    const held = new Set(['a', 'b']);
    expect(cleanGroupItems(ids(['b', 'a', 'b', 'a', 'b']), held, [], AT).map((i) => i.contentId)).toEqual(['b', 'a']);
  });

  it('drops cards the family library does not hold', () => {
    const held = new Set(['a', 'c']);
    expect(cleanGroupItems(ids(['x', 'a', 'b', 'c', 'y']), held, [], AT).map((i) => i.contentId)).toEqual(['a', 'c']);
    expect(cleanGroupItems(ids(['a', 'b']), new Set(), [], AT)).toEqual([]);
  });

  it('keeps addedAt of items already in the group, and stamps new ones with `at`', () => {
    const held = new Set(['a', 'b', 'c']);
    const previous = [
      { contentId: 'b', addedAt: EARLIER },
      { contentId: 'gone', addedAt: EARLIER },
    ];
    expect(cleanGroupItems(ids(['a', 'b', 'c']), held, previous, AT)).toEqual([
      { contentId: 'a', addedAt: AT },
      { contentId: 'b', addedAt: EARLIER },
      { contentId: 'c', addedAt: AT },
    ]);
  });

  it('returns an empty list for no items', () => {
    expect(cleanGroupItems([], new Set(['a']), [{ contentId: 'a', addedAt: EARLIER }], AT)).toEqual([]);
  });

  it('ignores fields other than contentId', () => {
    const items = [{ contentId: 'a', addedAt: 'forged', extra: 1 } as { contentId: string }];
    expect(cleanGroupItems(items, new Set(['a']), [], AT)).toEqual([{ contentId: 'a', addedAt: AT }]);
  });
});

describe('visibleItems', () => {
  it('pairs each item with its card, in item order', () => {
    const items = [
      { contentId: 'b', addedAt: '1' },
      { contentId: 'a', addedAt: '2' },
    ];
    const docs = new Map([
      ['a', 'doc-a'],
      ['b', 'doc-b'],
    ]);
    expect(visibleItems(items, docs)).toEqual({ items, cards: ['doc-b', 'doc-a'] });
  });

  it('leaves out an item whose card is gone, so items and cards stay one to one', () => {
    const items = [
      { contentId: 'a', addedAt: '1' },
      { contentId: 'deleted', addedAt: '2' },
      { contentId: 'c', addedAt: '3' },
    ];
    const docs = new Map([
      ['a', 'doc-a'],
      ['c', 'doc-c'],
    ]);
    const shown = visibleItems(items, docs);
    expect(shown.items.map((i) => i.contentId)).toEqual(['a', 'c']);
    expect(shown.cards).toEqual(['doc-a', 'doc-c']);
  });
});

describe('groupImageUrl', () => {
  const BASE = 'https://shelf.example';
  it('puts the URL-encoded image id into every {imageId} of the template', () => {
    expect(groupImageUrl('https://img.example/groups/{imageId}', 'moon-01', BASE)).toBe('https://img.example/groups/moon-01');
    expect(groupImageUrl('https://img.example/{imageId}/{imageId}.png', 'a b/c?d', BASE)).toBe(
      'https://img.example/a%20b%2Fc%3Fd/a%20b%2Fc%3Fd.png',
    );
  });

  it("points an uploaded family image's id (a SHA-256) at the family image endpoint", () => {
    const id = 'ab'.repeat(32);
    expect(groupImageUrl('https://img.example/groups/{imageId}', id, BASE)).toBe(`${BASE}/media/family/images/${id}`);
    expect(groupImageUrl('https://img.example/groups/{imageId}', id.toUpperCase(), BASE)).toBe(
      `https://img.example/groups/${id.toUpperCase()}`,
    );
  });
});

describe('modificationTime', () => {
  it('is now when the clock has moved past the previous modification', () => {
    expect(modificationTime('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z')).toBe('2026-01-01T00:00:00.001Z');
    expect(modificationTime('2025-06-01T00:00:00.000Z', '2026-01-01T12:00:00.000Z')).toBe('2026-01-01T12:00:00.000Z');
  });

  it('is one millisecond after the previous one within the same millisecond', () => {
    expect(modificationTime('2026-01-01T00:00:00.999Z', '2026-01-01T00:00:00.999Z')).toBe('2026-01-01T00:00:01.000Z');
  });

  it('never goes backwards when the clock steps back', () => {
    expect(modificationTime('2026-01-01T00:00:05.000Z', '2026-01-01T00:00:01.000Z')).toBe('2026-01-01T00:00:05.001Z');
  });

  it('falls back to now for an unreadable previous time', () => {
    expect(modificationTime('garbage', '2026-01-01T00:00:00.000Z')).toBe('2026-01-01T00:00:00.000Z');
  });
});

describe('checkGroupLimit', () => {
  it.each([0, 1, 19])('lets a family holding %i groups make one more', (held) => {
    expect(() => checkGroupLimit(held)).not.toThrow();
  });
  it.each([20, 21])('refuses one more to a family holding %i: 400 group-limit', (held) => {
    expect(() => checkGroupLimit(held)).toThrow(expect.objectContaining({ code: 'group-limit', statusCode: 400 }));
  });
});
