import { describe, expect, it } from 'vitest';
import { CATEGORIES } from '../../src/modules/cards/schemas.js';
import { COVER_COLOURS, coverColour, coverInitials } from '../../web/src/design/cover-art.js';
import { countOf, formatSize } from '../../web/src/format.js';
import { messages } from '../../web/src/messages.js';

// The words are English: asserted as such where the test runs in an English locale (as CI does).
const english = new Intl.NumberFormat().resolvedOptions().locale.startsWith('en');

describe('generated covers', () => {
  it.each([
    ['Our holiday', 'OH'],
    ['01 Bedtime stories for Ada', 'BS'],
    ['  élan vital ', 'ÉV'],
    ['Zoo', 'Z'],
    ['123', '1'],
    ['', '♪'],
  ])('%j shows the initials %j', (title, initials) => {
    expect(coverInitials(title)).toBe(initials);
  });

  it('a card keeps its colour (from its id, not its title), and ids spread over the palette', () => {
    expect(coverColour('aB3dE')).toBe(coverColour('aB3dE'));
    const used = new Set(Array.from({ length: 200 }, (_, i) => coverColour(`card${i}`)));
    expect([...used].every((c) => Number.isInteger(c) && c >= 0 && c < COVER_COLOURS)).toBe(true);
    expect(used.size).toBe(COVER_COLOURS);
  });
});

describe.runIf(english)('counts, sizes and categories in words', () => {
  it.each([
    [0, '0 bytes'],
    [1, '1 byte'],
    [999, '999 bytes'],
    [1000, '1 kB'],
    [13_900_000, '13.9 MB'],
    [7_200_000_000, '7.2 GB'],
  ])('%i bytes read %j', (bytes, text) => {
    expect(formatSize(bytes)).toBe(text);
  });

  it.each([
    [0, '0 cards'],
    [1, '1 card'],
    [2, '2 cards'],
    [1234, '1,234 cards'],
  ])('%i cards read %j', (n, text) => {
    expect(countOf(n, { one: '# card', other: '# cards' })).toBe(text);
    expect(messages.words.cards(n)).toBe(text);
  });

  it('the storage line is a sentence', () => {
    expect(messages.words.storage(formatSize(13_900_000))).toBe('Your cards hold 13.9 MB of audio.');
  });

  it("every category of the interface has a name in words, none of them its key", () => {
    for (const key of CATEGORIES) {
      const name = messages.words.categories[key];
      expect(name, key).toBeTruthy();
      expect(name, key).not.toBe(key);
    }
    expect(messages.words.categories.sfx).toBe('Sound effects');
  });
});
