import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MEDIA_URL_TTL_SECONDS, createMediaUrlSigner } from '../../src/modules/media/media-urls.js';
import type { RawJson } from '../../src/shared/raw-json.js';

const SECRET = 'a-secret-shared-with-the-media-host';
const NOW = Date.parse('2026-01-31T12:00:00.000Z');
const expected = (hash: string, expires: number) =>
  createHmac('sha256', SECRET).update(`${hash}:${expires}`).digest('base64url');

describe('createMediaUrlSigner', () => {
  const signer = createMediaUrlSigner('https://media.example/{hash}.aac', SECRET);

  it('signs a media reference into an expiring URL of the template', () => {
    const url = new URL(signer.sign('service:#abc123', NOW));
    const expires = NOW / 1000 + MEDIA_URL_TTL_SECONDS;
    expect(`${url.origin}${url.pathname}`).toBe('https://media.example/abc123.aac');
    expect(url.searchParams.get('expires')).toBe(String(expires));
    expect(url.searchParams.get('signature')).toBe(expected('abc123', expires));
  });

  it('adds its parameters after a query the template already has, and encodes the hash', () => {
    const s = createMediaUrlSigner('https://media.example/get?id={hash}', SECRET);
    const url = new URL(s.sign('service:#a/b?c', NOW));
    expect(url.searchParams.get('id')).toBe('a/b?c');
    expect(url.searchParams.get('signature')).toBe(expected('a/b?c', NOW / 1000 + MEDIA_URL_TTL_SECONDS));
  });

  it('replaces every string that is a media reference, at any depth, and nothing else', () => {
    const json = JSON.stringify({
      content: [{ item: 'service:#x1', icons: ['service:#x2', 'service:#', 'a service:#x3'], n: 1 }],
      key: 'service:#x4',
    }) as RawJson;
    const out = JSON.parse(signer.signAll(json, new Set(['x1', 'x2', 'x3', 'x4']), NOW));
    expect(out.content[0].item).toMatch(/^https:\/\/media\.example\/x1\.aac\?expires=/);
    expect(out.content[0].icons[0]).toMatch(/^https:\/\/media\.example\/x2\.aac\?expires=/);
    expect(out.content[0].icons.slice(1)).toEqual(['service:#', 'a service:#x3']);
    expect(out.content[0].n).toBe(1);
    expect(out.key).toMatch(/^https:\/\/media\.example\/x4\.aac\?/);
  });

  it('signs yoto:#<hash> exactly like service:#<hash>: both name the same media', () => {
    expect(signer.sign('yoto:#abc123', NOW)).toBe(signer.sign('service:#abc123', NOW));
    const json = JSON.stringify({ content: [{ item: 'yoto:#y1', icon: 'service:#y1', other: 'yoto:#', x: 'yoto:y1' }] }) as RawJson;
    const out = JSON.parse(signer.signAll(json, new Set(['y1']), NOW));
    expect(out.content[0].item).toMatch(/^https:\/\/media\.example\/y1\.aac\?expires=/);
    expect(out.content[0].item).toBe(out.content[0].icon);
    expect(out.content[0].other).toBe('yoto:#');
    expect(out.content[0].x).toBe('yoto:y1');
  });

  it('refuses to sign what is not a media reference', () => {
    for (const ref of ['abc', 'yoto:#', 'YOTO:#a', 'yoto:#a b', 'https://x.example/a']) {
      expect(() => signer.sign(ref, NOW), ref).toThrow();
    }
  });

  it('returns JSON without media references untouched', () => {
    const json = '{"content":[{"item":"abcde","note":"é \\"q\\""}]}' as RawJson;
    expect(signer.signAll(json, new Set(['abcde']), NOW)).toBe(json);
  });

  it('signs only the references to readable hashes, and leaves the others as stored', () => {
    const json = JSON.stringify({ mine: 'service:#m1', theirs: 'service:#t1', also: ['yoto:#m1', 'yoto:#t1'] }) as RawJson;
    const out = JSON.parse(signer.signAll(json, new Set(['m1']), NOW));
    expect(out.mine).toMatch(/^https:\/\/media\.example\/m1\.aac\?expires=/);
    expect(out.also[0]).toBe(out.mine);
    expect(out.theirs).toBe('service:#t1');
    expect(out.also[1]).toBe('yoto:#t1');
    // Nothing readable: the answer as it is.
    expect(signer.signAll(json, new Set(), NOW)).toBe(json);
  });
});
