import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { sweepExpired } from '../../src/oauth/adapter.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { Browser, field, formAction, tokenRequest, type Answer } from '../support/oauth-browser.js';
import { oauthRecordRow } from '../support/rows.js';
import { testDialect } from '../support/test-database.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const EMAIL = 'ann@example.com';
const PASSWORD = 'correct horse battery';
const SCOPE = 'openid profile offline_access';
/** The refresh reuse grace of the app under test: short, so the test can wait it out. */
const GRACE_SECONDS = 2;

describe(`signing in on ${testDialect()}`, { timeout: 120_000 }, () => {
  let t: TestApp;
  let userId: string;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: 'http://localhost', REFRESH_REUSE_GRACE_SECONDS: String(GRACE_SECONDS) });
    // The app's own store is not exposed; a second connection to the same database adds the account.
    const store = openStore(t.config.database);
    try {
      userId = (await createAccountService(store).add({ email: EMAIL, displayName: 'Ann', password: PASSWORD })).userId;
    } finally {
      await store.db.destroy();
    }
  });
  afterAll(async () => t?.close());

  /** Signs in and answers the approval page on an interaction page already reached. */
  async function signInAndDecide(browser: Browser, page: Answer, decision: 'approve' | 'deny', password = PASSWORD): Promise<Answer> {
    expect(page.status).toBe(200);
    expect(page.text).toContain('Sign in');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    const wrong = await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), email: EMAIL, password: 'not the password' });
    expect(wrong.text).toContain('do not match an account');
    const signedIn = await browser.follow(await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), email: EMAIL.toUpperCase(), password }));
    expect(signedIn.text).toContain('Approve this app?');
    return browser.follow(await browser.request('POST', formAction(signedIn.text), { csrf: field(signedIn.text, 'csrf'), decision }));
  }

  async function startDevice(clientId = 'yoto-device-client') {
    const raw = await t.app.inject({
      method: 'POST',
      url: '/oauth/device/code',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ client_id: clientId, scope: SCOPE, audience: 'https://api.yotoplay.com' }).toString(),
    });
    expect(raw.statusCode, raw.body).toBe(200);
    return JSON.parse(raw.body) as { device_code: string; user_code: string; verification_uri: string; interval: number; expires_in: number };
  }

  /** Enters the code at /activate, confirms it, and lands on the sign-in page. */
  async function enterCode(browser: Browser, userCode: string, clientId: string): Promise<Answer> {
    const entry = await browser.request('GET', '/activate');
    expect(entry.text).toContain('<label for="user_code">Code</label>');
    const confirm = await browser.request('POST', '/activate', { xsrf: field(entry.text, 'xsrf'), user_code: userCode });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(clientId);
    expect(confirm.text).toContain('Cardshelf has not verified this app');
    return browser.follow(await browser.request('POST', '/activate', { xsrf: field(confirm.text, 'xsrf'), user_code: field(confirm.text, 'user_code'), confirm: 'yes' }));
  }

  const poll = (deviceCode: string, clientId = 'yoto-device-client') =>
    tokenRequest(t, { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId });

  it('discovery names the public paths and the key the tokens are signed with', async () => {
    const found = await t.call('GET', '/.well-known/openid-configuration');
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({
      issuer: 'http://localhost',
      authorization_endpoint: 'http://localhost/authorize',
      token_endpoint: 'http://localhost/oauth/token',
      device_authorization_endpoint: 'http://localhost/oauth/device/code',
      revocation_endpoint: 'http://localhost/oauth/revoke',
      userinfo_endpoint: 'http://localhost/userinfo',
      jwks_uri: 'http://localhost/.well-known/jwks.json',
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
    });
    expect(found.body.grant_types_supported).toEqual(expect.arrayContaining([DEVICE_GRANT, 'authorization_code', 'refresh_token']));
    expect(found.body.grant_types_supported).not.toContain('password');
  });

  it('device grant: 403 authorization_pending, slow_down when polled too soon, a bogus code 400 invalid_grant, then approval gives a working EdDSA JWT', async () => {
    const device = await startDevice();
    expect(device.verification_uri).toBe('http://localhost/activate');
    expect(device.interval).toBe(5);
    expect(device.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);

    const pending = await poll(device.device_code);
    expect(pending).toMatchObject({ status: 403, body: { error: 'authorization_pending' } });
    const tooSoon = await poll(device.device_code);
    expect(tooSoon).toMatchObject({ status: 403, body: { error: 'slow_down' } });
    const bogus = await poll('not-a-device-code');
    expect(bogus).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    const browser = new Browser(t);
    const done = await signInAndDecide(browser, await enterCode(browser, device.user_code, 'yoto-device-client'), 'approve');
    expect(done.status).toBe(200);
    expect(done.text).toContain('Device connected');

    const tokens = await poll(device.device_code);
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 14_400, refresh_token: expect.any(String) });
    expect(decodeProtectedHeader(tokens.body.access_token)).toMatchObject({ alg: 'EdDSA' });
    const claims = decodeJwt(tokens.body.access_token);
    expect(claims).toMatchObject({ sub: userId, aud: 'cardshelf', scope: 'user:content:manage family:library:manage' });
    expect(claims.exp! - claims.iat!).toBe(14_400);
    const jwks = await t.call('GET', '/.well-known/jwks.json');
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toContain(decodeProtectedHeader(tokens.body.access_token).kid);

    const mine = await t.call('GET', '/content/mine', { token: tokens.body.access_token });
    expect(mine.status).toBe(200);
    // The code is spent.
    expect((await poll(device.device_code)).body.error).toBe('invalid_grant');
  });

  it('device grant: denial answers 403 access_denied; a device code past its expiry 403 expired_token', async () => {
    const denied = await startDevice();
    const browser = new Browser(t);
    await signInAndDecide(browser, await enterCode(browser, denied.user_code, 'yoto-device-client'), 'deny');
    expect(await poll(denied.device_code)).toMatchObject({ status: 403, body: { error: 'access_denied' } });

    const expiring = await startDevice();
    const store = openStore(t.config.database);
    try {
      const row = await store.db.selectFrom('oauth_records').select(['id', 'payload']).where('model', '=', 'DeviceCode').where('user_code', '=', expiring.user_code.replace('-', '')).executeTakeFirstOrThrow();
      const payload = { ...JSON.parse(row.payload), exp: Math.floor(Date.now() / 1000) - 1 };
      await store.db.updateTable('oauth_records').set({ payload: JSON.stringify(payload) }).where('model', '=', 'DeviceCode').where('id', '=', row.id).execute();
    } finally {
      await store.db.destroy();
    }
    expect(await poll(expiring.device_code)).toMatchObject({ status: 403, body: { error: 'expired_token' } });
  });

  describe('authorization code with PKCE to a loopback redirect', () => {
    let callback: Server;
    let received: URL[];
    let redirectUri: string;
    beforeAll(async () => {
      received = [];
      callback = createServer((req, res) => {
        received.push(new URL(req.url!, 'http://127.0.0.1'));
        res.end('signed in');
      });
      await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
      redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    });
    afterAll(async () => new Promise<void>((resolve) => callback.close(() => resolve())));

    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');

    async function authorize(clientId: string, uri: string): Promise<Answer> {
      const query = new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: uri,
        scope: SCOPE,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        audience: 'https://api.yotoplay.com',
      });
      const browser = new Browser(t);
      const page = await browser.follow(await browser.request('GET', `/authorize?${query}`));
      if (page.status !== 200 || !page.text.includes('Sign in')) return page;
      return signInAndDecide(browser, page, 'approve');
    }

    it('signs in without state, the code arrives at the random port; a wrong verifier and a reused code are refused; refresh rotates; revocation ends it', async () => {
      const last = await authorize('yoto-browser-client', redirectUri);
      expect(last.status).toBe(303);
      expect(last.location).toMatch(new RegExp(`^${redirectUri}\\?code=`));
      await fetch(last.location!);
      const code = received.at(-1)!.searchParams.get('code')!;
      expect(code).toBeTruthy();

      const exchange = { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: 'yoto-browser-client' };
      expect(await tokenRequest(t, { ...exchange, code_verifier: randomBytes(32).toString('base64url') })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      const tokens = await tokenRequest(t, { ...exchange, code_verifier: verifier });
      expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
      expect(decodeJwt(tokens.body.access_token)).toMatchObject({ sub: userId, scope: 'user:content:manage family:library:manage' });
      expect((await t.call('GET', '/content/mine', { token: tokens.body.access_token })).status).toBe(200);

      // Refresh with `audience` (yoto_api) and without (yoto-js): each answer carries a new refresh token.
      const first = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: 'yoto-browser-client', audience: 'https://api.yotoplay.com' });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body.refresh_token).toEqual(expect.any(String));
      expect(first.body.refresh_token).not.toBe(tokens.body.refresh_token);
      expect(decodeJwt(first.body.access_token)).toMatchObject({ sub: userId, aud: 'cardshelf' });
      const second = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: 'yoto-browser-client' });
      expect(second.status, JSON.stringify(second.body)).toBe(200);
      expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
      expect((await t.call('GET', '/content/mine', { token: second.body.access_token })).status).toBe(200);

      const bogus = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'bogus', client_id: 'yoto-browser-client' });
      expect(bogus).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect(bogus.headers['content-type']).toMatch(/^application\/json/);

      const revoke = await t.app.inject({
        method: 'POST',
        url: '/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ token: second.body.refresh_token, client_id: 'yoto-browser-client' }).toString(),
      });
      expect(revoke.statusCode).toBe(200);
      expect(await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: second.body.refresh_token, client_id: 'yoto-browser-client' })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

      // A code used twice is refused (and the engine revokes what it gave, RFC 6749 section 4.1.2).
      expect(await tokenRequest(t, { ...exchange, code_verifier: verifier })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    });

    /** Signs in by PKCE and answers the first tokens. */
    async function pkceTokens(clientId: string): Promise<Record<string, any>> {
      const last = await authorize(clientId, redirectUri);
      expect(last.location).toMatch(new RegExp(`^${redirectUri}\\?code=`));
      const code = new URL(last.location!).searchParams.get('code')!;
      const tokens = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier });
      expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
      return tokens.body;
    }

    it('refresh reuse: inside the grace window a used refresh token still works (concurrent refreshes both succeed); after it, its reuse revokes the whole grant', async () => {
      const clientId = 'yoto-reuse-client';
      const refresh = (refreshToken: string) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
      const first = await pkceTokens(clientId);
      const rotated = await refresh(first.refresh_token);
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      const used = rotated.body.refresh_token as string;

      // Two refreshes with the same token at once (two tabs, a retry): both succeed, with distinct tokens.
      const [a, b] = await Promise.all([refresh(used), refresh(used)]);
      expect([a.status, b.status], JSON.stringify([a.body, b.body])).toEqual([200, 200]);
      expect(new Set([used, a.body.refresh_token, b.body.refresh_token]).size).toBe(3);
      // Again, a moment later: still inside the window.
      const again = await refresh(used);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect((await t.call('GET', '/content/mine', { token: again.body.access_token })).status).toBe(200);

      await new Promise((resolve) => setTimeout(resolve, GRACE_SECONDS * 1000 + 200));
      // After the window: a replay. The token is refused, and so is every token of its grant.
      expect(await refresh(used)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      for (const live of [a.body.refresh_token, b.body.refresh_token, again.body.refresh_token]) {
        expect(await refresh(live)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      }
    });

    it('refuses a redirect that is neither registered nor loopback, without redirecting', async () => {
      const refused = await authorize('yoto-browser-client', 'https://evil.example/callback');
      expect(refused.status).toBe(400);
      expect(refused.location).toBeUndefined();
      expect(refused.text).toContain('redirect_uri');
    });
  });

  it('a form posted without its CSRF token is refused', async () => {
    const device = await startDevice();
    const browser = new Browser(t);
    const page = await enterCode(browser, device.user_code, 'yoto-device-client');
    const forged = await browser.request('POST', formAction(page.text), { email: EMAIL, password: PASSWORD });
    expect(forged.status).toBe(403);
    expect(forged.location).toBeUndefined();
  });

  it('cookies are HttpOnly and SameSite=Lax, not Secure over plain HTTP', async () => {
    const device = await startDevice();
    const raw = await t.app.inject({ method: 'GET', url: `/activate?user_code=${device.user_code}` });
    const cookies = [raw.headers['set-cookie']].flat().filter(Boolean) as string[];
    expect(cookies.length).toBeGreaterThan(0);
    for (const c of cookies) {
      expect(c).toMatch(/; httponly/i);
      expect(c).toMatch(/; samesite=lax/i);
      expect(c).not.toMatch(/; secure/i);
    }
  });

  it('expired records are swept an hour after they expire, the others kept', async () => {
    const store = openStore(t.config.database);
    try {
      const at = (ms: number) => new Date(Date.now() + ms).toISOString();
      const row = (id: string, expires_at: string | null) => oauthRecordRow({ model: 'Test', id, expires_at });
      await store.db.insertInto('oauth_records').values([row('old', at(-2 * 3600_000)), row('recent', at(-60_000)), row('live', at(60_000)), row('forever', null)]).execute();
      expect(await sweepExpired(store)).toBeGreaterThanOrEqual(1);
      const left = await store.db.selectFrom('oauth_records').select('id').where('model', '=', 'Test').orderBy('id').execute();
      expect(left.map((r) => r.id)).toEqual(['forever', 'live', 'recent']);
    } finally {
      await store.db.destroy();
    }
  });

  it('tokens from `cardshelf token` are still accepted', async () => {
    const token = await t.token('auth0|operator-made');
    expect((await t.call('GET', '/content/mine', { token })).status).toBe(200);
  });
});

describe(`behind TLS on ${testDialect()}`, () => {
  it('cookies are Secure when the public base URL is https', async () => {
    const t = await startTestApp({ PUBLIC_BASE_URL: 'https://cardshelf.example' });
    try {
      const raw = await t.app.inject({
        method: 'GET',
        url: `/authorize?${new URLSearchParams({ client_id: 'c', response_type: 'code', redirect_uri: 'http://127.0.0.1:9/callback', scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
      });
      expect(raw.statusCode, raw.body).toBe(303);
      const cookies = [raw.headers['set-cookie']].flat().filter(Boolean) as string[];
      expect(cookies.length).toBeGreaterThan(0);
      for (const c of cookies) expect(c).toMatch(/; secure/i);
    } finally {
      await t.close();
    }
  });
});

describe(`with an external issuer on ${testDialect()}`, () => {
  it('the embedded sign-in server is off', async () => {
    const t = await startTestApp({ AUTH_ISSUER: 'https://issuer.example/', AUTH_AUDIENCE: 'cardshelf', AUTH_JWKS_URL: 'https://issuer.example/jwks' });
    try {
      for (const [method, url] of [['GET', '/.well-known/openid-configuration'], ['POST', '/oauth/token'], ['POST', '/oauth/device/code'], ['GET', '/activate']] as const) {
        expect((await t.call(method, url)).status, url).toBe(404);
      }
    } finally {
      await t.close();
    }
  });
});
