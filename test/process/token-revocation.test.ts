import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { loadOrCreateSigningKey } from '../../src/auth/local-issuer.js';
import { openStore } from '../../src/db/store.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { Browser, field, formAction, tokenRequest } from '../support/oauth-browser.js';
import { http, startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

/**
 * Issue 33, rows 4 and 6: an access token is refused once its grant, itself or its account is
 * revoked (on this instance at once, on another within its poll), and an ID token is never a
 * bearer token.
 */
const REDIRECT = 'http://127.0.0.1:9/callback';
const GRACE_SECONDS = 1;
/** Each case signs in as its own account: a disable or reset ends only that one's sign-ins. */
const PASSWORD = 'correct horse battery';
const emailOf = (name: string): string => `${name}@example.com`;
const NAMES = ['ann', 'bob', 'carol', 'dan', 'erin', 'fay', 'gus', 'hal'];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Tokens {
  access_token: string;
  refresh_token: string;
  id_token: string;
}

describe(`token revocation on ${testDialect()}`, { timeout: 120_000 }, () => {
  let t: TestApp;
  const userIds = new Map<string, string>();

  /** What the operator's command line does: another connection to the same database. */
  async function withAccounts<T>(work: (accounts: ReturnType<typeof createAccountService>) => Promise<T>): Promise<T> {
    const store = openStore(t.config.database);
    try {
      return await work(createAccountService(store));
    } finally {
      await store.db.destroy();
    }
  }

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: 'http://localhost', REFRESH_REUSE_GRACE_SECONDS: String(GRACE_SECONDS), TOKEN_REVOCATION_POLL_MS: '100' });
    await withAccounts(async (accounts) => {
      for (const name of NAMES) userIds.set(name, (await accounts.add({ email: emailOf(name), displayName: name, password: PASSWORD })).userId);
    });
  });
  afterAll(async () => t?.close());

  /** An app's sign-in by PKCE in `browser` (signing in there first unless it is already). */
  async function signIn(name: string, clientId = `app-of-${name}`, browser = new Browser(t)): Promise<Tokens & { code: string; verifier: string }> {
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid profile offline_access',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    let page = await browser.follow(await browser.request('GET', `/authorize?${query}`));
    if (page.text.includes('name="password"')) {
      page = await browser.follow(await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), email: emailOf(name), password: PASSWORD }));
    }
    if (page.text.includes('Approve this app?')) {
      page = await browser.follow(await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), decision: 'approve' }));
    }
    expect(page.location, page.text.slice(0, 300)).toMatch(/^http:\/\/127\.0\.0\.1:9\/callback\?code=/);
    const code = new URL(page.location!).searchParams.get('code')!;
    const tokens = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    return { ...(tokens.body as Tokens), code, verifier };
  }

  const revoke = (clientId: string, token: string) =>
    t.app.inject({
      method: 'POST',
      url: '/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token, client_id: clientId }).toString(),
    });

  const refresh = (clientId: string, refreshToken: string) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });

  /** A 401 for a revoked token: the documented error, and the challenge says why. */
  async function expectRevoked(token: string, url = '/user/family'): Promise<void> {
    const r = await t.call('GET', url, { token });
    expect(r.status, JSON.stringify(r.body)).toBe(401);
    expect(r.body.error.code).toBe('unauthorized');
    expect(r.headers['www-authenticate']).toContain('token has been revoked');
  }

  /** Signs in to /account and signs the app of `grantOfClient` out there. */
  async function signOutAtAccountPage(name: string, clientId: string): Promise<void> {
    const browser = new Browser(t);
    const form = await browser.request('GET', '/account');
    const signedIn = await browser.request('POST', '/account/sign-in', { csrf: field(form.text, 'csrf'), email: emailOf(name), password: PASSWORD });
    expect(signedIn.status, signedIn.text).toBe(303);
    const page = await browser.request('GET', '/account');
    const grant = new RegExp(`<code>${clientId}</code>[\\s\\S]*?name="grant" value="([^"]+)"`).exec(page.text)?.[1];
    expect(grant, page.text).toBeDefined();
    const revoked = await browser.request('POST', '/account/apps/revoke', { csrf: field(page.text, 'csrf'), grant: grant! });
    expect(revoked.status, revoked.text).toBe(200);
  }

  it.each([
    {
      how: '/oauth/revoke of its refresh token',
      name: 'ann',
      act: async (s: Tokens, clientId: string) => expect((await revoke(clientId, s.refresh_token)).statusCode).toBe(200),
    },
    {
      how: 'signing the app out at /account',
      name: 'bob',
      act: async (_s: Tokens, clientId: string) => signOutAtAccountPage('bob', clientId),
    },
    {
      how: 'its authorization code used again',
      name: 'carol',
      act: async (s: Tokens & { code: string; verifier: string }, clientId: string) => {
        const again = await tokenRequest(t, { grant_type: 'authorization_code', code: s.code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: s.verifier });
        expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      },
    },
    {
      how: 'its refresh token reused after the grace',
      name: 'dan',
      act: async (s: Tokens, clientId: string) => {
        expect((await refresh(clientId, s.refresh_token)).status).toBe(200);
        await sleep(GRACE_SECONDS * 1000 + 300);
        expect(await refresh(clientId, s.refresh_token)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      },
    },
  ])('an access token is refused at once after $how (its grant revoked), though its check was cached', async ({ name, act }) => {
    const clientId = `app-of-${name}`;
    const signedIn = await signIn(name, clientId);
    expect(decodeJwt(signedIn.access_token)).toMatchObject({ cardshelf_grant: expect.any(String), jti: expect.any(String) });
    // Checked once: the token is in the verifier's cache from here on.
    expect((await t.call('GET', '/user/family', { token: signedIn.access_token })).status).toBe(200);
    await act(signedIn, clientId);
    await expectRevoked(signedIn.access_token);
    await expectRevoked(signedIn.access_token, '/content/mine');
    expect(await refresh(clientId, signedIn.refresh_token)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('/oauth/revoke of an access token answers 200 and refuses that token at once; its sign-in goes on', async () => {
    const clientId = 'app-of-erin';
    const signedIn = await signIn('erin', clientId);
    expect((await t.call('GET', '/user/family', { token: signedIn.access_token })).status).toBe(200);
    // Another client cannot revoke it (RFC 7009: 200 all the same, nothing done).
    expect((await revoke('someone-else', signedIn.access_token)).statusCode).toBe(200);
    expect((await t.call('GET', '/user/family', { token: signedIn.access_token })).status).toBe(200);

    const revoked = await revoke(clientId, signedIn.access_token);
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.body).toBe('');
    await expectRevoked(signedIn.access_token);
    // Revoked again, or garbage: 200, as RFC 7009 says.
    expect((await revoke(clientId, signedIn.access_token)).statusCode).toBe(200);
    expect((await revoke(clientId, 'e30.e30.e30')).statusCode).toBe(200);
    // Only that token: the refresh token still works, and its new access token too.
    const next = await refresh(clientId, signedIn.refresh_token);
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect((await t.call('GET', '/user/family', { token: next.body.access_token })).status).toBe(200);
  });

  it('disabling an account refuses its tokens (the engine’s and `cardshelf token`’s) and ends its refresh; enabling it again does not bring them back', async () => {
    const fay = userIds.get('fay')!;
    const signedIn = await signIn('fay');
    const cliToken = await t.token(fay);
    for (const token of [signedIn.access_token, cliToken]) expect((await t.call('GET', '/user/family', { token })).status).toBe(200);
    // An account's revocation takes tokens issued in an earlier second (`iat` is in seconds).
    await sleep(1100);
    await withAccounts((accounts) => accounts.setDisabled(fay, true));
    // Written by another process: this instance reads it within its poll (100 ms here).
    await expect.poll(async () => (await t.call('GET', '/user/family', { token: cliToken })).status, { timeout: 3000, interval: 50 }).toBe(401);
    await expectRevoked(signedIn.access_token);
    await expectRevoked(cliToken);
    expect(await refresh('app-of-fay', signedIn.refresh_token)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    await withAccounts((accounts) => accounts.setDisabled(fay, false));
    await sleep(300);
    await expectRevoked(signedIn.access_token);
    await expectRevoked(cliToken);
    // A token issued after works.
    await sleep(1000);
    expect((await t.call('GET', '/user/family', { token: await t.token(fay) })).status).toBe(200);
  });

  it('a password reset refuses its tokens, ends its refresh tokens, and its browser must sign in again', async () => {
    const gus = userIds.get('gus')!;
    const browser = new Browser(t);
    const signedIn = await signIn('gus', 'app-of-gus', browser);
    expect((await t.call('GET', '/user/family', { token: signedIn.access_token })).status).toBe(200);

    await withAccounts((accounts) => accounts.resetPassword(gus, 'a brand new password'));
    await expect.poll(async () => (await t.call('GET', '/user/family', { token: signedIn.access_token })).status, { timeout: 3000, interval: 50 }).toBe(401);
    await expectRevoked(signedIn.access_token);
    expect(await refresh('app-of-gus', signedIn.refresh_token)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    // The same browser starts another sign-in: its session is gone, so it is asked to sign in.
    const query = new URLSearchParams({
      client_id: 'app-of-gus',
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid offline_access',
      code_challenge: createHash('sha256').update('x'.repeat(43)).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const page = await browser.follow(await browser.request('GET', `/authorize?${query}`));
    expect(page.location).toBeUndefined();
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="password"');
  });

  describe('ID tokens are not bearer tokens (row 6)', () => {
    it('the engine issues access tokens typed at+jwt and ID tokens that are not', async () => {
      const signedIn = await signIn('hal');
      expect(decodeProtectedHeader(signedIn.access_token).typ).toBe('at+jwt');
      expect(decodeProtectedHeader(signedIn.id_token).typ).not.toBe('at+jwt');
      expect(decodeProtectedHeader(await t.token('auth0|cli')).typ).toBe('at+jwt');
    });

    /** An ID token as the engine signs them, for a client whose id is an audience the API accepts. */
    async function idTokenFor(audience: string, typ: string | undefined): Promise<string> {
      if (t.config.auth.mode !== 'local') throw new Error('local issuer expected');
      const key = await loadOrCreateSigningKey(t.config.auth.keyFile);
      return new SignJWT({ sub: userIds.get('hal')!, nonce: 'n', at_hash: 'x' })
        .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, ...(typ ? { typ } : {}) })
        .setIssuer(t.config.publicBaseUrl)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(key.privateKey);
    }

    it.each([
      ['/user/family', 'cardshelf', undefined],
      ['/card/mine', 'cardshelf', undefined],
      ['/user/family', 'https://api.yotoplay.com', 'JWT'],
      ['/card/mine', 'https://api.yotoplay.com', 'JWT'],
    ])('an ID token as bearer on %s (aud %s, typ %s) is 401', async (url, audience, typ) => {
      const r = await t.call('GET', url, { token: await idTokenFor(audience, typ) });
      expect(r.status, JSON.stringify(r.body)).toBe(401);
      expect(r.headers['www-authenticate']).toContain('not an access token');
    });

    it('a token of `cardshelf token` minted before tokens were typed (typ JWT, iss LOCAL_ISSUER) is still taken', async () => {
      if (t.config.auth.mode !== 'local') throw new Error('local issuer expected');
      const key = await loadOrCreateSigningKey(t.config.auth.keyFile);
      const old = await new SignJWT({ scope: 'user:content:manage family:library:manage' })
        .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'JWT' })
        .setSubject('auth0|old-cli')
        .setIssuer(t.config.auth.issuer)
        .setAudience(t.config.auth.audience)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(key.privateKey);
      expect((await t.call('GET', '/content/mine', { token: old })).status).toBe(200);
    });

    it.each([['cardshelf'], ['https://api.yotoplay.com']])('the engine refuses the client id %s (an accepted audience)', async (clientId) => {
      const device = await t.app.inject({
        method: 'POST',
        url: '/oauth/device/code',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ client_id: clientId, scope: 'openid offline_access' }).toString(),
      });
      expect(device.statusCode, device.body).toBe(401);
      expect(JSON.parse(device.body)).toMatchObject({ error: 'invalid_client' });
      const query = new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
      const authorize = await t.app.inject({ method: 'GET', url: `/authorize?${query}` });
      expect(authorize.statusCode).toBe(400);
      expect(authorize.headers.location).toBeUndefined();
    });
  });

  describe('on another instance sharing the database', () => {
    let other: ServerProcess;
    beforeAll(async () => {
      // A `cardshelf serve` process on the same database and key as the app under test.
      const database: Record<string, string> = t.config.database.kind === 'postgres' ? { DATABASE_URL: t.config.database.url } : {};
      other = await startServer({ DATA_DIR: t.dataDir, PUBLIC_BASE_URL: 'http://localhost', TOKEN_REVOCATION_POLL_MS: '500', ...database });
    });
    afterAll(async () => other?.stop('SIGKILL', 0));

    /** How long the other instance took to refuse `token` (ms), watching from `since`. */
    async function refusedThereWithin(token: string, since: number): Promise<number> {
      await expect.poll(async () => (await http(other.url, 'GET', '/user/family', { token })).status, { timeout: 5000, interval: 50 }).toBe(401);
      return Date.now() - since;
    }

    it('a grant revoked here, and an account disabled by the command line, are refused there within its poll', async () => {
      const signedIn = await signIn('ann', 'app-two-of-ann');
      expect((await http(other.url, 'GET', '/user/family', { token: signedIn.access_token })).status).toBe(200);
      const revokedAt = Date.now();
      expect((await revoke('app-two-of-ann', signedIn.refresh_token)).statusCode).toBe(200);
      expect(await refusedThereWithin(signedIn.access_token, revokedAt)).toBeLessThan(2500);
      const there = await http(other.url, 'GET', '/user/family', { token: signedIn.access_token });
      expect(there.headers['www-authenticate']).toContain('token has been revoked');

      const accessToken = (await signIn('hal', 'app-two-of-hal')).access_token;
      expect((await http(other.url, 'GET', '/user/family', { token: accessToken })).status).toBe(200);
      const disabledAt = Date.now();
      await withAccounts((accounts) => accounts.setDisabled(userIds.get('hal')!, true));
      expect(await refusedThereWithin(accessToken, disabledAt)).toBeLessThan(2500);
    });
  });
});
