import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { registerErrorAnswers } from '../../src/http/error-handler.js';
import { registerWebApp } from '../../src/http/web-app.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { Browser, field, formAction, tokenRequest } from '../support/oauth-browser.js';
import { testDialect } from '../support/test-database.js';

const EMAIL = 'web@example.com';
const PASSWORD = 'correct horse battery';
const CALLBACK = 'http://localhost/app/callback';

/**
 * The web app as the server serves it (src/http/web-app.ts, its policy in
 * src/http/security-headers.ts) and its built-in sign-in client (src/oauth/shims.ts). The pages
 * themselves are driven in a browser by test/browser/web-app-browser.test.ts.
 */
describe(`the web app's files and sign-in client on ${testDialect()}`, { timeout: 60_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: 'http://localhost' });
    const store = openStore(t.config.database);
    try {
      await createAccountService(store).add({ email: EMAIL, displayName: 'Web Parent', password: PASSWORD });
    } finally {
      await store.db.destroy();
    }
  });
  afterAll(async () => t?.close());

  it('serves the app at /app/ with a strict Content-Security-Policy; any /app/ path gets the app; API 404s stay JSON', async () => {
    for (const url of ['/app/', '/app', '/app/cards/abc', '/app/callback?code=x&state=y']) {
      const page = await t.app.inject(url);
      expect(page.statusCode, url).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toContain('<div id="root">');
      expect(page.headers['cache-control']).toBe('no-cache');
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('unsafe-eval');
    }
    // No inline script for the policy to refuse: every script is a file of the app's.
    const html = (await t.app.inject('/app/')).body;
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /<script[^>]+src="(\/app\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const js = await t.app.inject(script);
    expect(js.statusCode).toBe(200);
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');

    const missing = await t.call('GET', '/app/assets/nope.js');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: 'not-found' } });
    const api = await t.call('GET', '/no/such/route');
    expect(api.status).toBe(404);
    expect(api.body).toMatchObject({ error: { code: 'not-found' } });
    // Elsewhere the policy is the one it was (Swagger UI's inline styles at /docs).
    expect(String((await t.app.inject('/docs')).headers['content-security-policy'])).toContain("style-src 'self' https: 'unsafe-inline'");
  });

  it('the web app signs in as cardshelf-web: code with PKCE to /app/callback, then refresh; other redirects are refused', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const query = (redirectUri: string) =>
      new URLSearchParams({
        client_id: 'cardshelf-web',
        response_type: 'code',
        redirect_uri: redirectUri,
        scope: 'openid profile offline_access',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        state: 'st',
      });
    const elsewhere = await new Browser(t).follow(await new Browser(t).request('GET', `/authorize?${query('http://127.0.0.1:9/callback')}`));
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.text).toContain('redirect_uri');

    const browser = new Browser(t);
    const page = await browser.follow(await browser.request('GET', `/authorize?${query(CALLBACK)}`));
    // Cardshelf's own app: a sign-in to Cardshelf, not an app asking for the account.
    expect(page.text).toContain('<h1>Sign in</h1>');
    expect(page.text).not.toContain('asks to use your Cardshelf account');
    expect(page.text).not.toContain('<code>cardshelf-web</code>');
    // Signed in, straight back to the app: no consent page. Redirects followed by hand up to the
    // app's callback (Browser.follow would load the app's page).
    let back = await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), email: EMAIL, password: PASSWORD });
    for (let i = 0; i < 5 && back.location && !back.location.startsWith(CALLBACK); i++) back = await browser.request('GET', back.location);
    expect(back.text).not.toContain('Approve this app?');
    expect(back.location).toMatch(/^http:\/\/localhost\/app\/callback\?code=/);
    const code = new URL(back.location!).searchParams.get('code')!;
    expect(new URL(back.location!).searchParams.get('state')).toBe('st');

    const tokens = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: 'cardshelf-web', code_verifier: verifier });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect((await t.call('GET', '/content/mine', { token: tokens.body.access_token })).status).toBe(200);
    const renewed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: 'cardshelf-web' });
    expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
    expect((await t.call('GET', '/content/mine', { token: renewed.body.access_token })).status).toBe(200);
  });

  // Consent is skipped for Cardshelf's own app alone (src/oauth/first-party.ts): any other app is
  // asked about, in a fresh browser and in one already signed in to the web app.
  it.each([
    ['in a fresh browser', false],
    ['in a browser signed in to the web app', true],
  ])('another app still asks for approval %s', async (_name, webAppFirst) => {
    const verifier = randomBytes(32).toString('base64url');
    const query = (clientId: string, redirectUri: string) =>
      new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: redirectUri,
        scope: 'openid profile offline_access',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      });
    const browser = new Browser(t);
    if (webAppFirst) {
      const page = await browser.follow(await browser.request('GET', `/authorize?${query('cardshelf-web', CALLBACK).toString()}`));
      let back = await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), email: EMAIL, password: PASSWORD });
      for (let i = 0; i < 5 && back.location && !back.location.startsWith(CALLBACK); i++) back = await browser.request('GET', back.location);
      expect(back.location).toMatch(/^http:\/\/localhost\/app\/callback\?code=/);
    }
    let page = await browser.follow(await browser.request('GET', `/authorize?${query('family-helper', 'http://127.0.0.1:7777/callback').toString()}`));
    if (!webAppFirst) {
      expect(page.text).toContain('<code>family-helper</code>');
      page = await browser.follow(await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), email: EMAIL, password: PASSWORD }));
    }
    expect(page.text).toContain('Approve this app?');
    expect(page.text).toContain('Cardshelf has not verified this app');
  });
});

describe('the web app not built', () => {
  it('answers /app/ with a JSON 404 that says how to build it; nothing else changes', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'cardshelf-web-'));
    const app = Fastify({ logger: false });
    registerErrorAnswers(app);
    try {
      await registerWebApp(app, empty);
      const answer = await app.inject('/app/');
      expect(answer.statusCode).toBe(404);
      expect(answer.json()).toMatchObject({ error: { code: 'not-found', message: expect.stringContaining('npm run build:web') } });
    } finally {
      await app.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});
