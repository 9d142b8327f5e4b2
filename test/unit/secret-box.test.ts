import { describe, expect, it } from 'vitest';
import { createSecretBox } from '../../src/modules/links/secret-box.js';

/**
 * The remote's tokens at rest (DECISIONS.md "Linked services": encrypted at rest): sealed under a
 * key derived from the instance's secret, bound to the row they are stored in.
 */
const box = createSecretBox('the-instance-secret');
const TOKEN = 'refresh-token-plain-text-0123456789';

describe('the secret box of linked services', () => {
  it('opens what it sealed, for the same row', () => {
    const sealed = box.seal(TOKEN, 'link-1');
    expect(box.open(sealed, 'link-1')).toBe(TOKEN);
    // Another box made from the same secret (another instance of the deployment) opens it too.
    expect(createSecretBox('the-instance-secret').open(sealed, 'link-1')).toBe(TOKEN);
    expect(box.open(box.seal('', 'link-1'), 'link-1')).toBe('');
  });

  it('does not open for another row: a sealed value copied into another row stays shut', () => {
    expect(box.open(box.seal(TOKEN, 'link-1'), 'link-2')).toBeUndefined();
  });

  it('does not open under another instance secret', () => {
    expect(createSecretBox('another-instance-secret').open(box.seal(TOKEN, 'link-1'), 'link-1')).toBeUndefined();
  });

  /** The sealed text with one character of its `part` (0: version, 1: iv, 2: body) changed. */
  const tampered = (sealed: string, part: number, at: number): string => {
    const parts = sealed.split('.');
    const text = parts[part]!;
    const i = at < 0 ? text.length + at : at;
    parts[part] = `${text.slice(0, i)}${text[i] === 'A' ? 'B' : 'A'}${text.slice(i + 1)}`;
    return parts.join('.');
  };

  it.each([
    ['the version', 0, 0],
    ['the nonce', 1, 0],
    ['the first byte of the cipher text', 2, 0],
    ['the authentication tag', 2, -3],
  ])('does not open when %s is changed', (_what, part, at) => {
    const sealed = box.seal(TOKEN, 'link-1');
    const changed = tampered(sealed, part, at);
    expect(changed).not.toBe(sealed);
    expect(box.open(changed, 'link-1')).toBeUndefined();
  });

  it.each([
    ['empty', ''],
    ['without its parts', 'v1'],
    ['cut short', 'v1.AAAA'],
    ['not base64url', 'v1.!!!.???'],
    ['a tag alone', 'v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA'],
  ])('does not open a sealed text %s (undefined, never a throw)', (_what, sealed) => {
    expect(box.open(sealed, 'link-1')).toBeUndefined();
  });

  it('the plain text is nowhere in the sealed text, and two seals of it differ', () => {
    const [a, b] = [box.seal(TOKEN, 'link-1'), box.seal(TOKEN, 'link-1')];
    for (const sealed of [a, b]) {
      expect(sealed).not.toContain(TOKEN);
      expect(sealed).not.toContain(Buffer.from(TOKEN).toString('base64url'));
      expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    }
    expect(a).not.toBe(b);
    expect(box.open(a, 'link-1')).toBe(box.open(b, 'link-1'));
  });
});
