import { describe, expect, it } from 'vitest';
import { createTagger, requireMatch } from '../../src/shared/entity-tag.js';
import { AppError } from '../../src/shared/errors.js';

const tagger = createTagger(['0.1.0', 'https://shelf.example']);
const current = tagger.tag(['group', 'g1', 3], [7, 0]);
const signed = tagger.signed(current, { window: 5_900_000, keyId: 'k-_1', reader: 'auth0|a' });

const refusal = (fn: () => void): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof AppError ? `${err.statusCode} ${err.code}` : String(err);
  }
};

describe('createTagger', () => {
  it('is a function of its parts and of the deployment, a strong quoted tag', () => {
    expect(tagger.tag(['card', 'c1', 3])).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(current).toMatch(/^"[A-Za-z0-9_-]{27}\.[A-Za-z0-9_-]{16}"$/);
    expect(tagger.tag(['group', 'g1', 3], [7, 0])).toBe(current);
    expect(createTagger(['0.1.0', 'https://shelf.example']).tag(['group', 'g1', 3], [7, 0])).toBe(current);
    expect(tagger.tag(['group', 'g1', 3], [8, 0])).not.toBe(current);
    expect(tagger.tag(['group', 'g1', 4], [7, 0])).not.toBe(current);
    expect(createTagger(['0.1.1', 'https://shelf.example']).tag(['group', 'g1', 3], [7, 0])).not.toBe(current);
    // Parts are separated: ('ab', 'c') is not ('a', 'bc').
    expect(tagger.tag(['ab', 'c'])).not.toBe(tagger.tag(['a', 'bc']));
  });

  it('names the signing window, key and reader in a signed answer\'s tag', () => {
    expect(signed).toMatch(new RegExp(`^${current.slice(0, -1)}\\.s5900000-k-_1\\.[A-Za-z0-9_-]{11}"$`));
    expect(tagger.signed(current, { window: 5_900_000, keyId: 'k-_1', reader: 'auth0|a' })).toBe(signed);
    expect(tagger.signed(current, { window: 5_900_001, keyId: 'k-_1', reader: 'auth0|a' })).not.toBe(signed);
    expect(tagger.signed(current, { window: 5_900_000, keyId: 'other', reader: 'auth0|a' })).not.toBe(signed);
    // What is signed depends on who reads: another reader's answer has another tag.
    expect(tagger.signed(current, { window: 5_900_000, keyId: 'k-_1', reader: 'auth0|b' })).not.toBe(signed);
  });
});

describe('requireMatch', () => {
  it.each([
    ['no If-Match', undefined, current, undefined],
    ['*, the resource exists', '*' as const, current, undefined],
    ['*, no resource', '*' as const, '', '412 precondition-failed'],
    ['the current tag', [current], current, undefined],
    ['a list holding it', ['"x"', current], current, undefined],
    ['the signed form of the current tag', [signed], current, undefined],
    ['the current tag, the resource read signed', [current], signed, undefined],
    ['an older version of the resource', [tagger.tag(['group', 'g1', 2], [7, 0])], current, '412 precondition-failed'],
    ['the resource unchanged, what it shows changed', [tagger.tag(['group', 'g1', 3], [6, 0])], current, undefined],
    ['the state part alone', [`${current.split('.')[0]}"`], current, undefined],
    ['a tag whose state only starts like it', [`${current.split('.')[0]}x"`], current, '412 precondition-failed'],
    ['an empty list (only weak tags were sent)', [], current, '412 precondition-failed'],
    ['any tag, no resource', [current], '', '412 precondition-failed'],
  ])('%s', (_what, precondition, now, expected) => {
    expect(refusal(() => requireMatch(precondition, now, 'group g1'))).toBe(expected);
  });

  it('answers the current tag with the refusal', () => {
    try {
      requireMatch(['"old"'], current, 'group g1');
      expect.unreachable();
    } catch (err) {
      expect((err as AppError).headers).toEqual({ etag: current });
      expect((err as AppError).message).toContain('group g1 has changed');
    }
  });
});
