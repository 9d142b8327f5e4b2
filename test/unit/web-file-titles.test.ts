import { describe, expect, it } from 'vitest';
import { titleFromFileName } from '../../web/src/file-titles.js';

describe("a track's title from its file's name (issue 35, row 12)", () => {
  it.each([
    ['01 - Intro.mp3', 'Intro'],
    ['02_The_Bear.m4a', 'The Bear'],
    ['1 Hello.mp3', 'Hello'],
    ['10 Goodnight.mp3', 'Goodnight'],
    ['03. The Owl.flac', 'The Owl'],
    ['04) Rain.ogg', 'Rain'],
    ['1-05 Disc one, track five.mp3', 'Disc one, track five'],
    ['007_-_Bedtime.mp3', 'Bedtime'],
    ['12 – Lullaby.opus', 'Lullaby'],
    // Not a track number: kept.
    ['Part 1.mp3', 'Part 1'],
    ['Side 2.mp3', 'Side 2'],
    ['2001 A Space Odyssey.mp3', '2001 A Space Odyssey'],
    ['01.mp3', '01'],
    ['Mr. Bear goes out.m4a', 'Mr. Bear goes out'],
    ['no extension', 'no extension'],
    ['  05   Spaces  .mp3', 'Spaces'],
  ])('%s -> %s', (name, title) => {
    expect(titleFromFileName(name)).toBe(title);
  });
});
