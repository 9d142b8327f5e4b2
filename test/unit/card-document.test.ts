import { describe, expect, it } from 'vitest';
import {
  buildCardDoc,
  mergeUpdate,
  slugify,
  summaryOf,
  type GeneratedCardFields,
} from '../../src/modules/cards/card-document.js';
import type { CardDoc } from '../../src/modules/cards/schemas.js';

const GEN: GeneratedCardFields = {
  cardId: 'Ab3dE',
  userId: 'auth0|owner',
  createdAt: '2024-01-02T03:04:05.006Z',
  updatedAt: '2024-02-03T04:05:06.007Z',
  deleted: false,
};

describe('slugify', () => {
  it.each([
    ['Bedtime Stories!', 'bedtime-stories'],
    ['  Hello   World  ', 'hello-world'],
    ['--Already-Slugged--', 'already-slugged'],
    ['10 Little Ducks', '10-little-ducks'],
    ['Crème Brûlée', 'creme-brulee'],
    ['Ça va? Señor Niño', 'ca-va-senor-nino'],
    ['ÄÖÜ', 'aou'],
    ['Tom & Jerry: Part 2', 'tom-jerry-part-2'],
    ['a_b.c/d\\e', 'a-b-c-d-e'],
    ['UPPER lower', 'upper-lower'],
    ['ﬁne', 'fine'],
    ['x', 'x'],
  ])('%j -> %j', (title, slug) => {
    expect(slugify(title)).toBe(slug);
  });

  it.each(['', '!!!', '   ', '日本語', '🎵🎶', '---'])('gives an empty slug for %j', (title) => {
    expect(slugify(title)).toBe('');
  });

  it('only ever gives [a-z0-9] words joined by single hyphens', () => {
    for (const title of ['A -- B', 'Ünïcödé Tïtlé № 5', '\t\nTabs\tand\nnewlines', 'Émile & Zoë’s Café']) {
      expect(slugify(title)).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    }
  });
});

describe('buildCardDoc', () => {
  it('stores what the writer sent, with the server values of the generated fields', () => {
    const input = {
      title: 'My Card',
      metadata: { category: 'music' },
      content: { activity: 'service_Player', chapters: [] },
      availability: 'free',
      unknownField: { kept: true },
    };
    const doc = buildCardDoc(input, GEN);
    expect(doc).toEqual({
      title: 'My Card',
      metadata: { category: 'music' },
      content: { activity: 'service_Player', chapters: [] },
      availability: 'free',
      unknownField: { kept: true },
      cardId: 'Ab3dE',
      userId: 'auth0|owner',
      createdAt: GEN.createdAt,
      updatedAt: GEN.updatedAt,
      slug: 'my-card',
      sortkey: 'my-card',
      deleted: false,
    });
  });

  it('ignores every generated field the writer sent', () => {
    const doc = buildCardDoc(
      {
        title: 'T',
        cardId: 'zzzzz',
        userId: 'auth0|mallory',
        createdAt: '1999-01-01T00:00:00.000Z',
        updatedAt: 5,
        slug: 'custom',
        sortkey: '0000',
        deleted: true,
      },
      { ...GEN, deleted: false },
    );
    expect(doc.cardId).toBe(GEN.cardId);
    expect(doc.userId).toBe(GEN.userId);
    expect(doc.createdAt).toBe(GEN.createdAt);
    expect(doc.updatedAt).toBe(GEN.updatedAt);
    expect(doc.slug).toBe('t');
    expect(doc.sortkey).toBe('t');
    expect(doc.deleted).toBe(false);
    expect(buildCardDoc({ title: 'T', deleted: false }, { ...GEN, deleted: true }).deleted).toBe(true);
  });

  it('always gives content and metadata objects', () => {
    const doc = buildCardDoc({ title: 'Bare' }, GEN);
    expect(doc.content).toEqual({});
    expect(doc.metadata).toEqual({});
  });

  it('drops undefined fields', () => {
    const doc = buildCardDoc({ title: 'U', note: undefined }, GEN);
    expect(Object.keys(doc)).not.toContain('note');
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it('falls back to the lower-cased card id for a title without a slug', () => {
    const doc = buildCardDoc({ title: '🎵' }, GEN);
    expect(doc.slug).toBe('ab3de');
    expect(doc.sortkey).toBe('ab3de');
    expect(doc.title).toBe('🎵');
  });

  it('sorts titles by their slug, whatever their case', () => {
    const keys = ['banana', 'Apple', 'cherry'].map((title) => buildCardDoc({ title }, GEN).sortkey);
    expect([...keys].sort()).toEqual(['apple', 'banana', 'cherry']);
  });

  it('does not change its input', () => {
    const input = { title: 'Keep', cardId: 'x', content: { chapters: [{ key: '01', tracks: [] }] } };
    const copy = structuredClone(input);
    buildCardDoc(input, GEN);
    expect(input).toEqual(copy);
  });
});

function doc(content: Record<string, unknown>, extra: Record<string, unknown> = {}): CardDoc {
  return buildCardDoc({ title: 'Doc', content, ...extra }, GEN);
}

describe('summaryOf', () => {
  it('removes content.chapters and keeps everything else', () => {
    const d = doc({ activity: 'service_Player', version: '2', chapters: [{ key: '01', tracks: [] }] }, { extra: 1 });
    const summary = summaryOf(d) as Record<string, any>;
    expect(summary.content).toEqual({ activity: 'service_Player', version: '2' });
    const { content: _c, ...rest } = d;
    const { content: _s, ...summaryRest } = summary;
    expect(summaryRest).toEqual(rest);
  });

  it('leaves the full document untouched', () => {
    const d = doc({ chapters: [{ key: '01', tracks: [] }] });
    summaryOf(d);
    expect(d.content.chapters).toEqual([{ key: '01', tracks: [] }]);
  });

  it('handles a card without chapters', () => {
    expect((summaryOf(doc({})) as Record<string, any>).content).toEqual({});
  });

  it('keeps metadata.list and other arrays (only content.chapters goes)', () => {
    const d = buildCardDoc({ title: 'L', metadata: { list: [1], chapters: ['m'] }, chapters: ['top'] }, GEN);
    const summary = summaryOf(d) as Record<string, any>;
    expect(summary.metadata).toEqual({ list: [1], chapters: ['m'] });
    expect(summary.chapters).toEqual(['top']);
  });
});

describe('mergeUpdate', () => {
  const stored = buildCardDoc(
    {
      title: 'Stored',
      availability: 'free',
      metadata: { author: 'A', description: 'kept?' },
      content: { activity: 'service_Player', version: '1', chapters: [{ key: '01', tracks: [] }] },
      extra: { a: 1 },
    },
    GEN,
  );

  it('keeps every top-level field left out', () => {
    const merged = mergeUpdate(stored, { title: 'New' });
    expect(merged).toEqual({ ...stored, title: 'New' });
  });

  it('replaces a top-level field sent, whole (no deep merge of metadata)', () => {
    const merged = mergeUpdate(stored, { metadata: { author: 'B' } });
    expect(merged.metadata).toEqual({ author: 'B' });
    expect(merged.content).toEqual(stored.content);
  });

  it('stores a field sent as null as null', () => {
    expect(mergeUpdate(stored, { extra: null }).extra).toBeNull();
  });

  it('keeps the stored chapters when the content sent has none (the list form)', () => {
    const merged = mergeUpdate(stored, { content: { activity: 'other', version: 2 } });
    expect(merged.content).toEqual({ activity: 'other', version: 2, chapters: [{ key: '01', tracks: [] }] });
  });

  it('replaces the chapters when the content sent has them, an empty list included', () => {
    expect((mergeUpdate(stored, { content: { chapters: [] } }).content as any).chapters).toEqual([]);
  });

  it('ignores the generated fields sent', () => {
    const merged = mergeUpdate(stored, { cardId: 'zzzzz', createdAt: 'x', deleted: true, userId: 'auth0|x' });
    expect(merged).toEqual(stored);
  });
});
