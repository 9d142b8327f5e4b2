import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { Browser, field, formAction, tokenRequest } from '../support/oauth-browser.js';
import { testDialect } from '../support/test-database.js';

const ANN = { email: 'ann@example.com', password: 'correct horse battery' };
const BOB = { email: 'bob@example.com', password: 'another long password' };
const DAVE = { email: 'dave@example.com', password: 'a third long password' };
const REDIRECT = 'http://127.0.0.1:9/callback';

/** The grant id in the revoke form of `clientId`'s row. */
const grantOf = (html: string, clientId: string): string => {
  const match = new RegExp(`<code>${clientId}</code>[\\s\\S]*?name="grant" value="([^"]+)"`).exec(html);
  if (!match) throw new Error(`no row for ${clientId} in ${html}`);
  return match[1]!;
};

describe(`the account page on ${testDialect()}`, { timeout: 120_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: 'http://localhost' });
    const store = openStore(t.config.database);
    try {
      const accounts = createAccountService(store);
      await accounts.add({ ...ANN, displayName: 'Ann' });
      await accounts.add({ ...BOB, displayName: 'Bob' });
      await accounts.add({ ...DAVE, displayName: 'Dave' });
    } finally {
      await store.db.destroy();
    }
  });
  afterAll(async () => t?.close());

  /** Signs `clientId` in as Ann (PKCE to a loopback redirect); answers its refresh token. */
  async function signInApp(clientId: string): Promise<string> {
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid offline_access',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const browser = new Browser(t);
    const page = await browser.follow(await browser.request('GET', `/authorize?${query}`));
    const approve = await browser.follow(await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), ...ANN }));
    const back = await browser.follow(await browser.request('POST', formAction(approve.text), { csrf: field(approve.text, 'csrf'), decision: 'approve' }));
    const code = new URL(back.location!).searchParams.get('code')!;
    const tokens = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    return tokens.body.refresh_token as string;
  }

  const refresh = (clientId: string, refreshToken: string) => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });

  async function signInToPage(who: typeof ANN): Promise<Browser> {
    const browser = new Browser(t);
    const form = await browser.request('GET', '/account');
    expect(form.status).toBe(200);
    expect(form.text).toContain('<label for="password">Password</label>');
    const signedIn = await browser.request('POST', '/account/sign-in', { csrf: field(form.text, 'csrf'), ...who });
    expect(signedIn.status, signedIn.text).toBe(303);
    const cookie = [signedIn.headers['set-cookie']].flat().join('\n');
    expect(cookie).toMatch(/cardshelf_account=.+; Max-Age=43200; Path=\/account; HttpOnly; SameSite=Lax$/);
    expect(cookie).not.toMatch(/Secure/);
    return browser;
  }

  it('lists the signed-in apps; revoking one ends its refresh at once, the other keeps working; signing out ends the page', async () => {
    const one = await signInApp('app-one');
    const two = await signInApp('app-two');

    const browser = await signInToPage(ANN);
    const page = await browser.request('GET', '/account');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).toContain('Signed in as Ann (ann@example.com)');
    expect(page.text).toContain('<code>app-one</code> <span class="muted">(not verified by Cardshelf)</span>');
    expect(page.text).toContain('<code>app-two</code>');

    const revoked = await browser.request('POST', '/account/apps/revoke', { csrf: field(page.text, 'csrf'), grant: grantOf(page.text, 'app-one') });
    expect(revoked.status).toBe(200);
    expect(revoked.text).toContain('The app is signed out');
    expect(revoked.text).not.toContain('<code>app-one</code>');
    expect(await refresh('app-one', one)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await refresh('app-two', two)).status).toBe(200);

    const out = await browser.request('POST', '/account/sign-out', { csrf: field(revoked.text, 'csrf') });
    expect(out.status).toBe(303);
    expect((await browser.request('GET', '/account')).text).toContain('Sign in to see the apps');
  });

  it("one account cannot sign out another's app; forms without their token or from another site are refused", async () => {
    const annsToken = await signInApp('app-three');
    const ann = await signInToPage(ANN);
    const annsPage = (await ann.request('GET', '/account')).text;
    const annsGrant = grantOf(annsPage, 'app-three');

    const bob = await signInToPage(BOB);
    const bobsPage = await bob.request('GET', '/account');
    expect(bobsPage.text).toContain('No apps are signed in to your account.');
    const refused = await bob.request('POST', '/account/apps/revoke', { csrf: field(bobsPage.text, 'csrf'), grant: annsGrant });
    expect(refused.status).toBe(404);

    expect((await ann.request('POST', '/account/apps/revoke', { grant: annsGrant })).status).toBe(403);
    // A valid token, but the browser says the post came from another site.
    const cookie = /cardshelf_account=[^;]+/.exec([(await signInToPageRaw(ANN))].join(''))![0];
    const crossSite = await t.app.inject({
      method: 'POST',
      url: '/account/apps/revoke',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
      payload: new URLSearchParams({ csrf: field(annsPage, 'csrf'), grant: annsGrant }).toString(),
    });
    expect(crossSite.statusCode).toBe(403);
    // Not signed in to the page: nothing is revoked.
    const anonymous = await new Browser(t).request('POST', '/account/apps/revoke', { csrf: field(annsPage, 'csrf'), grant: annsGrant });
    expect(anonymous.status).toBe(401);
    expect((await refresh('app-three', annsToken)).status).toBe(200);
  });

  it('a wrong password gets the one message, whether or not the email has an account, and is throttled', async () => {
    const browser = new Browser(t, '192.0.2.44');
    const form = await browser.request('GET', '/account');
    const known = await browser.request('POST', '/account/sign-in', { csrf: field(form.text, 'csrf'), email: ANN.email, password: 'wrong password' });
    const unknown = await browser.request('POST', '/account/sign-in', { csrf: field(form.text, 'csrf'), email: 'nobody@example.com', password: 'wrong password' });
    expect([known.status, unknown.status]).toEqual([401, 401]);
    expect(known.text).toContain('That email and password do not match an account.');
    expect(unknown.text.replace('nobody@example.com', ANN.email).replace(/name="csrf" value="[^"]+"/, '')).toBe(known.text.replace(/name="csrf" value="[^"]+"/, ''));
    let last = known;
    for (let i = 0; i < 6 && last.status !== 429; i++) {
      last = await browser.request('POST', '/account/sign-in', { csrf: field(form.text, 'csrf'), email: 'carol@example.com', password: 'wrong password' });
    }
    expect(last.status).toBe(429);
    expect(last.headers['retry-after']).toBe('2');
  });

  it('signing out ends the session on the server: the cookie replayed after it is refused', async () => {
    const browser = await signInToPage(ANN);
    const cookie = /cardshelf_account=[^;]+/.exec(await signInToPageRaw(ANN))![0];
    const replay = () => t.app.inject({ method: 'GET', url: '/account', headers: { cookie } });
    expect((await replay()).body).toContain('Signed in as Ann');

    // That second session signs out; the first is still signed in.
    const second = await t.app.inject({ method: 'GET', url: '/account', headers: { cookie } });
    const out = await t.app.inject({
      method: 'POST',
      url: '/account/sign-out',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ csrf: field(second.body, 'csrf') }).toString(),
    });
    expect(out.statusCode).toBe(303);
    const replayed = await replay();
    expect(replayed.body).toContain('Sign in to see the apps');
    expect(replayed.body).not.toContain('Signed in as Ann');
    const revokeWithIt = await t.app.inject({
      method: 'POST',
      url: '/account/apps/revoke',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ csrf: field(second.body, 'csrf'), grant: 'any' }).toString(),
    });
    expect(revokeWithIt.statusCode).toBe(401);
    expect((await browser.request('GET', '/account')).text).toContain('Signed in as Ann');
  });

  it("a form token of another session is refused (403), even of the same account's", async () => {
    const ann = await signInToPage(ANN);
    const annsPage = (await ann.request('GET', '/account')).text;
    const bob = await signInToPage(BOB);
    const annAgain = await signInToPage(ANN);
    const grant = 'no-such-grant';
    for (const [browser, who] of [[bob, 'Bob'], [annAgain, 'Ann in another browser']] as const) {
      const refused = await browser.request('POST', '/account/apps/revoke', { csrf: field(annsPage, 'csrf'), grant });
      expect(refused.status, who).toBe(403);
      expect(refused.json).toMatchObject({ error: { code: 'forbidden' } });
    }
    // With its own session's token, the same post goes through (and finds no such app).
    expect((await ann.request('POST', '/account/apps/revoke', { csrf: field(annsPage, 'csrf'), grant })).status).toBe(404);
  });

  it.each([
    ['disabling the account', async (accounts: ReturnType<typeof createAccountService>) => {
      await accounts.setDisabled(DAVE.email, true);
      await accounts.setDisabled(DAVE.email, false);
    }],
    ['resetting its password', async (accounts: ReturnType<typeof createAccountService>) => {
      await accounts.resetPassword(DAVE.email, DAVE.password);
    }],
  ])('%s ends its account page sessions at once', async (_what, change) => {
    const browser = await signInToPage(DAVE);
    expect((await browser.request('GET', '/account')).text).toContain('Signed in as Dave');
    const store = openStore(t.config.database);
    try {
      await change(createAccountService(store));
    } finally {
      await store.db.destroy();
    }
    expect((await browser.request('GET', '/account')).text).toContain('Sign in to see the apps');
  });

  /** The raw Set-Cookie of a sign-in to the page. */
  async function signInToPageRaw(who: typeof ANN): Promise<string> {
    const browser = new Browser(t);
    const form = await browser.request('GET', '/account');
    const signedIn = await browser.request('POST', '/account/sign-in', { csrf: field(form.text, 'csrf'), ...who });
    return [signedIn.headers['set-cookie']].flat().join('\n');
  }
});
