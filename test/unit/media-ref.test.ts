import { describe, expect, it } from 'vitest';
import { mayHoldMediaRef, mediaRefHash, mediaRefHashesIn } from '../../src/modules/cards/media-ref.js';

describe('mediaRefHash', () => {
  it.each([
    ['service:#abc123', 'abc123'],
    ['yoto:#abc123', 'abc123'],
    ['yoto:#a/b?c', 'a/b?c'],
  ])('%j names %j', (ref, hash) => {
    expect(mediaRefHash(ref)).toBe(hash);
  });

  it.each(['', 'abc', 'service:#', 'yoto:#', 'YOTO:#a', 'Service:#a', 'yoto:a', 'yoto:#a#b', 'yoto:#a b', ' yoto:#a', 'x yoto:#a', 'https://x.example/a'])(
    '%j is not a media reference',
    (value) => {
      expect(mediaRefHash(value)).toBeUndefined();
    },
  );
});

describe('mayHoldMediaRef', () => {
  it('finds either prefix anywhere, and nothing else', () => {
    expect(mayHoldMediaRef('{"a":"yoto:#x"}')).toBe(true);
    expect(mayHoldMediaRef('{"a":"service:#x"}')).toBe(true);
    expect(mayHoldMediaRef('{"a":"yoto:x","b":"https://x"}')).toBe(false);
  });
});

describe('mediaRefHashesIn', () => {
  it('collects the hash of every string that is a reference, whole, at any depth, once', () => {
    const json = JSON.stringify({ a: 'service:#h1', b: ['yoto:#h1', { c: 'yoto:#h2' }], d: 'see service:#h3', e: 'yoto:#', f: 1 });
    expect([...mediaRefHashesIn(json)].sort()).toEqual(['h1', 'h2']);
  });

  it('finds none in JSON without a prefix (and does not parse it)', () => {
    expect(mediaRefHashesIn('not JSON at all').size).toBe(0);
  });
});
