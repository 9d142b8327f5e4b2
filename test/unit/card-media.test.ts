import { describe, expect, it } from 'vitest';
import { coverSlots, fingerprint, mediaSlots, portable, setAt, valueAt } from '../../src/modules/links/card-media.js';

/** The media a card names, found alike on both sides of a link (links/card-media.ts). */
const [A, B, C, D] = ['a', 'b', 'c', 'd'].map((c) => c.repeat(64)) as [string, string, string, string];

const card = (): Record<string, unknown> => ({
  cardId: 'local1',
  userId: 'auth0|someone',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-02T00:00:00.000Z',
  deleted: false,
  sortkey: 'a card',
  title: 'A card',
  metadata: { cover: { imageL: 'https://media.example/cover.png' }, note: `yoto:#${D}` },
  content: {
    chapters: [
      {
        key: '01',
        title: 'One',
        display: { icon16x16: `yoto:#${A}` },
        tracks: [
          { key: '01', title: 'First', trackUrl: `yoto:#${B}`, display: { icon16x16: `service:#${C}` } },
          { key: '02', title: 'Stream', trackUrl: 'https://radio.example/live.mp3', type: 'stream' },
        ],
      },
      { key: '02', title: 'Two', tracks: [{ key: '03', title: 'Again', trackUrl: `service:#${B}` }] },
    ],
  },
});

describe('mediaSlots', () => {
  it('finds track audio and chapter and track icons, with where they are, in document order', () => {
    expect(mediaSlots(card())).toEqual([
      { kind: 'icon', hash: A, path: ['content', 'chapters', 0, 'display', 'icon16x16'] },
      { kind: 'audio', hash: B, path: ['content', 'chapters', 0, 'tracks', 0, 'trackUrl'] },
      { kind: 'icon', hash: C, path: ['content', 'chapters', 0, 'tracks', 0, 'display', 'icon16x16'] },
      { kind: 'audio', hash: B, path: ['content', 'chapters', 1, 'tracks', 0, 'trackUrl'] },
    ]);
  });

  it.each([
    ['a reference under another key', { metadata: { note: `yoto:#${A}` } }],
    ['a URL as a track', { tracks: [{ trackUrl: 'https://radio.example/live.mp3' }] }],
    ['a reference inside a longer text', { trackUrl: `see yoto:#${A}` }],
    ['a reference that is not a string', { trackUrl: { ref: `yoto:#${A}` }, icon16x16: 7 }],
    ['no media at all', { title: 'plain', tracks: [] }],
    ['a scalar', 'yoto:#abc'],
    ['null', null],
  ])('ignores %s', (_what, doc) => {
    expect(mediaSlots(doc)).toEqual([]);
  });
});

describe('valueAt and setAt', () => {
  it('reads and writes at a path of keys and indexes', () => {
    const doc = card();
    const path = ['content', 'chapters', 0, 'tracks', 0, 'trackUrl'];
    expect(valueAt(doc, path)).toBe(`yoto:#${B}`);
    setAt(doc, path, `yoto:#${D}`);
    expect(valueAt(doc, path)).toBe(`yoto:#${D}`);
    expect(mediaSlots(doc)[1]).toEqual({ kind: 'audio', hash: D, path });
    expect(valueAt(doc, [])).toBe(doc);
  });

  it.each([
    [['content', 'nothing', 'here']],
    [['title', 'length']],
    [['content', 'chapters', 9, 'title']],
  ])('answers undefined for a path that is not there: %j', (path) => {
    expect(valueAt(card(), path)).toBeUndefined();
  });
});

describe('coverSlots', () => {
  it.each([
    ['an https URL', 'https://media.example/cover.png', 'https://media.example/cover.png'],
    ['an http URL', 'http://media.example/c.png', 'http://media.example/c.png'],
    ['a reference', `yoto:#${A}`, undefined],
    ['a javascript URL', 'javascript:alert(1)', undefined],
  ])('takes %s', (_what, imageL, expected) => {
    expect(coverSlots({ metadata: { cover: { imageL } } })).toEqual(expected ? [{ path: ['metadata', 'cover', 'imageL'], url: expected }] : []);
  });

  it('finds the cover of the content too, each with where it sits', () => {
    const doc = { metadata: { cover: { imageL: 'https://a.example/1.png' } }, content: { cover: { imageL: 'https://a.example/2.png' } } };
    expect(coverSlots(doc)).toEqual([
      { path: ['metadata', 'cover', 'imageL'], url: 'https://a.example/1.png' },
      { path: ['content', 'cover', 'imageL'], url: 'https://a.example/2.png' },
    ]);
  });
});

describe('fingerprint', () => {
  it('does not depend on the order of keys, at any depth', () => {
    const a = { title: 'x', metadata: { b: 1, a: [{ y: 2, x: 1 }] } };
    const b = { metadata: { a: [{ x: 1, y: 2 }], b: 1 }, title: 'x' };
    expect(fingerprint(a)).toBe(fingerprint(b));
    expect(fingerprint(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ['a title', ['title'], 'Another'],
    ['a track reference', ['content', 'chapters', 0, 'tracks', 0, 'trackUrl'], `yoto:#${D}`],
    ['a key added', ['metadata', 'extra'], null],
    ['a number for a string', ['content', 'chapters', 0, 'key'], 1],
    ['a nested value', ['metadata', 'cover', 'imageL'], 'https://media.example/other.png'],
  ] as const)('changes when %s changes', (_what, path, value) => {
    const changed = card();
    setAt(changed, path, value);
    expect(fingerprint(changed)).not.toBe(fingerprint(card()));
  });

  it('changes when the order of an array changes, or a key is removed', () => {
    const reordered = card();
    (valueAt(reordered, ['content', 'chapters']) as unknown[]).reverse();
    expect(fingerprint(reordered)).not.toBe(fingerprint(card()));
    const removed = card();
    delete (valueAt(removed, ['metadata']) as Record<string, unknown>).note;
    expect(fingerprint(removed)).not.toBe(fingerprint(card()));
  });
});

describe('portable', () => {
  it("drops what belongs to the side the card is on, and keeps the rest", () => {
    const input = card();
    const copy = portable(input);
    for (const field of ['cardId', 'userId', 'createdAt', 'updatedAt', 'deleted', 'sortkey']) expect(copy, field).not.toHaveProperty(field);
    expect(copy).toEqual({ title: input.title, metadata: input.metadata, content: input.content });
  });

  it('does not change its input, nor share its nested objects with the copy', () => {
    const input = card();
    const copy = portable(input);
    expect(input).toEqual(card());
    setAt(copy, ['content', 'chapters', 0, 'title'], 'Changed');
    expect(valueAt(input, ['content', 'chapters', 0, 'title'])).toBe('One');
  });
});
