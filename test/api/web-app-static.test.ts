import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { expectBuildCurrent } from '../support/pages-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * The built web app's files as the server sends them (src/http/web-app.ts, web/vite.config.ts):
 * the build's brotli and gzip copies by Accept-Encoding, hashed assets cached for good, index.html
 * revalidated, a favicon at /favicon.ico, the manifest and service worker the page links to. A real
 * build (`npm run build:web`), through HTTP (app.inject).
 */
describe(`the web app's static files on ${testDialect()}`, { timeout: 60_000 }, () => {
  let t: TestApp;
  let html = '';
  /** The first-load script and style, as index.html names them. */
  let script = '';
  let style = '';
  beforeAll(async () => {
    await expectBuildCurrent();
    t = await startTestApp();
    html = (await t.app.inject('/app/')).body;
    script = /<script[^>]+src="(\/app\/assets\/[^"]+\.js)"/.exec(html)?.[1] ?? '';
    style = /<link[^>]+rel="stylesheet"[^>]+href="(\/app\/assets\/[^"]+\.css)"/.exec(html)?.[1] ?? '';
  });
  afterAll(async () => t?.close());

  const decoders: Record<string, (body: Buffer) => Buffer> = { br: brotliDecompressSync, gzip: gunzipSync };

  it.each([
    { accept: 'br', expected: 'br' },
    { accept: 'gzip, deflate, br, zstd', expected: 'br' },
    { accept: 'gzip', expected: 'gzip' },
    { accept: 'gzip;q=1, br;q=0', expected: 'gzip' },
    { accept: 'identity', expected: undefined },
    { accept: undefined, expected: undefined },
  ])('Accept-Encoding $accept: the script, style and page go as $expected, decoding to the same bytes', async ({ accept, expected }) => {
    for (const [url, type] of [[script, /^application\/javascript|^text\/javascript/], [style, /^text\/css/], ['/app/', /^text\/html/], ['/app/cards/abc', /^text\/html/]] as const) {
      expect(url, 'index.html names its script and style').toMatch(/^\/app\//);
      const plain = await t.app.inject(url);
      const answer = await t.app.inject({ url, headers: accept ? { 'accept-encoding': accept } : {} });
      expect(answer.statusCode, url).toBe(200);
      expect(answer.headers['content-encoding'], url).toBe(expected);
      expect(answer.headers['content-type'], url).toMatch(type);
      expect(String(answer.headers.vary), url).toMatch(/accept-encoding/i);
      const body = expected ? decoders[expected]!(answer.rawPayload) : answer.rawPayload;
      expect(body.equals(plain.rawPayload), url).toBe(true);
      if (expected) expect(answer.rawPayload.length, url).toBeLessThan(plain.rawPayload.length);
    }
  });

  it.each(['br', 'gzip', 'identity'])('the hashed assets are cached for good, the page and service worker revalidated (%s)', async (accept) => {
    const headers = { 'accept-encoding': accept };
    for (const url of [script, style]) {
      expect((await t.app.inject({ url, headers })).headers['cache-control'], url).toBe('public, max-age=31536000, immutable');
    }
    // The page names this release's assets, the worker decides what the shell is: both seen at once.
    for (const url of ['/app/', '/app/be-player', '/app/sw.js', '/app/manifest.webmanifest']) {
      const answer = await t.app.inject({ url, headers });
      expect(answer.statusCode, url).toBe(200);
      expect(answer.headers['cache-control'], url).toBe('no-cache');
    }
  });

  it('a favicon at /favicon.ico (where browsers look) and linked from the page', async () => {
    const root = await t.app.inject('/favicon.ico');
    expect(root.statusCode).toBe(200);
    expect(root.headers['content-type']).toMatch(/^image\//);
    // An ICO file: reserved 0, type 1 (icon), at least one image.
    expect([...root.rawPayload.subarray(0, 4)]).toEqual([0, 0, 1, 0]);
    expect(root.rawPayload.readUInt16LE(4)).toBeGreaterThan(0);
    const links = [...html.matchAll(/<link rel="icon" href="([^"]+)"/g)].map((m) => m[1]!);
    expect(links).toContain('/app/favicon.ico');
    for (const href of links) {
      const icon = await t.app.inject(href);
      expect(icon.statusCode, href).toBe(200);
      expect(icon.headers['content-type'], href).toMatch(/^image\//);
    }
  });

  it('the page links a manifest and registers the service worker from files the policy allows', async () => {
    const csp = String((await t.app.inject('/app/')).headers['content-security-policy']);
    expect(csp).toContain("worker-src 'self'");
    expect(csp).toContain("manifest-src 'self'");
    const manifestHref = /<link rel="manifest" href="([^"]+)"/.exec(html)?.[1];
    expect(manifestHref).toBe('/app/manifest.webmanifest');
    const manifest = await t.app.inject(manifestHref!);
    expect(manifest.headers['content-type']).toMatch(/^application\/manifest\+json/);
    expect(manifest.json()).toMatchObject({ start_url: '/app/be-player', scope: '/app/' });
    const register = /<script[^>]+src="(\/app\/registerSW\.js)"/.exec(html)?.[1];
    expect((await t.app.inject(register!)).body).toContain("register('/app/sw.js', { scope: '/app/' })");
    const worker = await t.app.inject('/app/sw.js');
    expect(worker.statusCode).toBe(200);
    expect(worker.headers['content-type']).toMatch(/javascript/);
  });
});
