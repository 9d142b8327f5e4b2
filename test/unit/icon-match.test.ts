import { describe, expect, it } from 'vitest';
import { matchesSearch, suggestIcons } from '../../web/src/icons/icon-match.js';

const icon = (title: string, ...tags: string[]) => ({ title, tags });
const LIBRARY = [
  icon('Bus', 'bus'),
  icon('Cart', 'cart'),
  icon('Car', 'car'),
  icon('Moon', 'moon'),
  icon('Alarm clock', 'alarm', 'clock'),
  icon('Book', 'book'),
  icon('Bed', 'bed'),
  icon('Fish', 'fish'),
  icon('Dog', 'dog'),
  icon('Sun', 'sun'),
  icon('Grandma', 'family'),
];
const titles = (list: { title: string }[]) => list.map((i) => i.title);

describe('icons suggested by a track title', () => {
  it.each([
    ['Wheels on the Bus', ['Bus']],
    ['01 The Moon and the Sun', ['Moon', 'Sun']],
    ['Dogs and fish at bedtime', ['Fish', 'Dog']],
    ['Car trip', ['Car']],
    ['Cars', ['Car']],
    ['Grandma reads a book: the family story', ['Grandma', 'Book']],
    ['A clock for the alarm', ['Alarm clock']],
    ['Part one', []],
    ['The three little bears', []],
    ['', []],
  ])('%j suggests %j', (title, expected) => {
    expect(titles(suggestIcons(title, LIBRARY))).toEqual(expected);
  });

  it('puts the icons sharing more words first and keeps at most the limit', () => {
    const list = [icon('Clock', 'clock'), icon('Alarm clock', 'alarm', 'clock'), icon('Alarm', 'alarm')];
    expect(titles(suggestIcons('alarm clock', list))).toEqual(['Alarm clock', 'Clock', 'Alarm']);
    expect(titles(suggestIcons('alarm clock', list, 1))).toEqual(['Alarm clock']);
  });

  it('suggests nothing without a title', () => {
    expect(suggestIcons(undefined, LIBRARY)).toEqual([]);
  });
});

describe('icon search', () => {
  it.each([
    ['', LIBRARY.length],
    ['car', 2],
    ['CART', 1],
    ['al cl', 1],
    ['clocks', 1],
    ['family', 1],
    ['zebra', 0],
  ])('%j finds %i icons', (search, count) => {
    expect(LIBRARY.filter((i) => matchesSearch(i, search))).toHaveLength(count);
  });
});
