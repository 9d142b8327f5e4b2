import { describe, expect, it } from 'vitest';
import { KeyIndex } from '../../src/transfer/key-index.js';
import { sniffType, typeMismatch } from '../../src/transfer/media-type.js';

/** The pieces of the import's first pass that need no database (issue 17, rows 2 and 10). */
describe('KeyIndex', () => {
  it('finds a key added twice, and answers which keys it holds once sealed', () => {
    const index = new KeyIndex();
    for (let i = 0; i < 1000; i++) index.add(`card-${i}`);
    expect(index.seal()).toBe(false);
    expect(index.has('card-0')).toBe(true);
    expect(index.has('card-999')).toBe(true);
    expect(index.has('card-1000')).toBe(false);

    const twice = new KeyIndex();
    for (const key of ['a', 'b', 'c', 'b']) twice.add(key);
    expect(twice.seal()).toBe(true);
  });

  it('is asked only once sealed, and takes no key after', () => {
    const index = new KeyIndex();
    index.add('x');
    expect(() => index.has('x')).toThrow(/not sealed/);
    index.seal();
    expect(() => index.add('y')).toThrow(/sealed/);
  });
});

describe('media types read again from the bytes', () => {
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082', 'hex');
  const html = Buffer.from('<!doctype html><script>alert(1)</script>');

  it('stores bytes only as the type they are: never HTML, whatever the row says', async () => {
    expect(await sniffType(png)).toBe('image/png');
    expect(await sniffType(html)).toBeUndefined();
    expect(typeMismatch('image/png', 'image/png')).toBeUndefined();
    expect(typeMismatch('text/html', await sniffType(html))).toBe('its bytes are of no type Cardshelf stores (it says text/html)');
    expect(typeMismatch('image/png', await sniffType(html))).toMatch(/no type Cardshelf stores/);
    expect(typeMismatch('text/html', 'image/png')).toBe('it says text/html, but its bytes are image/png');
    expect(typeMismatch('image/jpeg', 'image/png')).toBe('it says image/jpeg, but its bytes are image/png');
    expect(typeMismatch('application/pdf', 'application/pdf')).toMatch(/a type Cardshelf does not store/);
  });

  it('takes any audio type for audio bytes (a transcode is stored as audio/mp4)', () => {
    expect(typeMismatch('audio/mp4', 'audio/x-m4a')).toBeUndefined();
    expect(typeMismatch('audio/mpeg', 'audio/mpeg')).toBeUndefined();
    expect(typeMismatch('image/png', 'audio/mpeg')).toBe('it says image/png, but its bytes are audio/mpeg');
  });
});
