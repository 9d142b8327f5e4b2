import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { Browser, field, formAction, tokenRequest, type Answer } from '../support/oauth-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * The browser's sign-in to the pages (issue 33, row 5): it can be ended (on the approve page, and
 * from /account), it ends with the browser or 12 hours after signing in, and approving a device
 * or a new app asks for the password again when the sign-in is older than 5 minutes.
 */
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const ANN = { email: 'ann@example.com', password: 'correct horse battery' };
const BOB = { email: 'bob@example.com', password: 'another long password' };

describe(`the sign-in session on ${testDialect()}`, { timeout: 120_000 }, () => {
  let t: TestApp;
  let userId: string;
  let bobId: string;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: 'http://localhost' });
    const store = openStore(t.config.database);
    try {
      userId = (await createAccountService(store).add({ ...ANN, displayName: 'Ann' })).userId;
      bobId = (await createAccountService(store).add({ ...BOB, displayName: 'Bob' })).userId;
    } finally {
      await store.db.destroy();
    }
  });
  afterAll(async () => t?.close());

  // Each device from its own address: the device-code throttle (10 an address) is not under test here.
  let devices = 0;
  async function startDevice(clientId: string): Promise<{ device_code: string; user_code: string }> {
    const raw = await t.app.inject({
      method: 'POST',
      url: '/oauth/device/code',
      remoteAddress: `198.51.100.${++devices}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ client_id: clientId, scope: 'openid profile offline_access' }).toString(),
    });
    expect(raw.statusCode, raw.body).toBe(200);
    return JSON.parse(raw.body) as { device_code: string; user_code: string };
  }

  /** Enters a new device's code at /activate and confirms it: the page that follows (sign in, or approve). */
  async function connectDevice(browser: Browser, clientId: string): Promise<{ page: Answer; deviceCode: string }> {
    const device = await startDevice(clientId);
    const entry = await browser.request('GET', '/activate');
    const confirm = await browser.request('POST', '/activate', { xsrf: field(entry.text, 'xsrf'), user_code: device.user_code });
    const page = await browser.follow(await browser.request('POST', '/activate', { xsrf: field(confirm.text, 'xsrf'), user_code: field(confirm.text, 'user_code'), confirm: 'yes' }));
    return { page, deviceCode: device.device_code };
  }

  const signIn = async (browser: Browser, page: Answer, who = ANN): Promise<Answer> =>
    browser.follow(await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), ...who }));
  const approve = async (browser: Browser, page: Answer): Promise<Answer> =>
    browser.follow(await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), decision: 'approve' }));
  const poll = (deviceCode: string, clientId: string) => tokenRequest(t, { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId });

  /** Moves the time Ann signed in (the engine's sessions of her account) `seconds` back. */
  async function ageSignIn(seconds: number): Promise<void> {
    const store = openStore(t.config.database);
    try {
      const rows = await store.db.selectFrom('oauth_records').select(['id', 'payload']).where('model', '=', 'Session').where('account_id', '=', userId).execute();
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        const payload = JSON.parse(row.payload) as { loginTs: number };
        await store.db.updateTable('oauth_records').set({ payload: JSON.stringify({ ...payload, loginTs: payload.loginTs - seconds }) }).where('model', '=', 'Session').where('id', '=', row.id).execute();
      }
    } finally {
      await store.db.destroy();
    }
  }

  it('"Not you? Sign out" on the approve page ends the sign-in: the next device asks for the password; what was approved stays signed in', async () => {
    const browser = new Browser(t);
    const first = await connectDevice(browser, 'device-one');
    expect(first.page.text).toContain('<h1>Sign in</h1>');
    const approvePage = await signIn(browser, first.page);
    expect(approvePage.text).toContain('Approve this app?');
    expect(approvePage.text).toContain('Not Ann? <a href="/session/end">Sign out</a>');
    expect((await approve(browser, approvePage)).text).toContain('Device connected');
    const tokens = await poll(first.deviceCode, 'device-one');
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);

    // A second device in the same browser, at once: the sign-in is fresh, so straight to Approve.
    const second = await connectDevice(browser, 'device-two');
    expect(second.page.text).toContain('Approve this app?');

    const signOut = await browser.request('GET', '/session/end');
    expect(signOut.status).toBe(200);
    expect(signOut.headers['content-security-policy']).toContain("default-src 'none'");
    expect(signOut.text).toContain('<h1>Sign out?</h1>');
    const done = await browser.follow(await browser.request('POST', '/session/end/confirm', { xsrf: field(signOut.text, 'xsrf'), logout: 'yes' }));
    expect(done.status).toBe(200);
    expect(done.text).toContain('You are signed out of Cardshelf in this browser');

    const third = await connectDevice(browser, 'device-three');
    expect(third.page.text).toContain('<h1>Sign in</h1>');
    expect(third.page.text).not.toContain('Approve this app?');
    // The device approved before keeps its sign-in.
    expect((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: String(tokens.body.refresh_token), client_id: 'device-one' })).status).toBe(200);
  });

  it('a sign-in older than 5 minutes asks again (the same email filled in) before approving a device; a sign-in since then approves', async () => {
    const browser = new Browser(t);
    const first = await connectDevice(browser, 'device-four');
    await approve(browser, await signIn(browser, first.page));
    expect((await poll(first.deviceCode, 'device-four')).status).toBe(200);

    await ageSignIn(4 * 60);
    const shown = await connectDevice(browser, 'device-five');
    expect(shown.page.text).toContain('Approve this app?');

    await ageSignIn(2 * 60);
    // The approve page shown while the sign-in was fresh, approved now: the engine asks to sign in first.
    const late = await approve(browser, shown.page);
    expect(late.text).toContain('<h1>Sign in</h1>');
    expect(late.text).toContain('You signed in here more than 5 minutes ago: sign in again to approve.');
    expect(late.text).toContain(`autocomplete="username" required value="${ANN.email}"`);
    expect((await poll(shown.deviceCode, 'device-five')).body.error).toBe('authorization_pending');
    const again = await signIn(browser, late);
    expect(again.text).toContain('Approve this app?');
    expect((await approve(browser, again)).text).toContain('Device connected');
    expect((await poll(shown.deviceCode, 'device-five')).status).toBe(200);

    // A new device, once the sign-in is old again: the sign-in page, not the approve page.
    await ageSignIn(6 * 60);
    const stale = await connectDevice(browser, 'device-six');
    expect(stale.page.text).toContain('<h1>Sign in</h1>');
    expect(stale.page.text).toContain('sign in again to approve');
    expect((await approve(browser, await signIn(browser, stale.page))).text).toContain('Device connected');
    expect((await poll(stale.deviceCode, 'device-six')).status).toBe(200);
  });

  it('asked again on a shared tablet, another person signs in instead: the first sign-in ends and the device is approved for the second', async () => {
    const browser = new Browser(t);
    const first = await connectDevice(browser, 'device-tablet-ann');
    await approve(browser, await signIn(browser, first.page));
    await ageSignIn(6 * 60);
    const stale = await connectDevice(browser, 'device-tablet-bob');
    expect(stale.page.text).toContain('Not Ann? Sign in with your own account.');
    // The engine ends Ann's session first (a form its page posts by itself; posted here as a browser without script would).
    const switching = await browser.request('POST', formAction(stale.page.text), { csrf: field(stale.page.text, 'csrf'), ...BOB });
    const handOff = await browser.follow(switching);
    const action = /<form method="post" action="([^"]+)"/.exec(handOff.text)?.[1];
    expect(action, handOff.text.slice(0, 400)).toBe('http://localhost/session/end/confirm');
    expect(handOff.headers['content-security-policy']).toMatch(/script-src 'self' 'sha256-/);
    const approvePage = await browser.follow(await browser.request('POST', action!, { xsrf: field(handOff.text, 'xsrf'), logout: 'yes' }));
    expect(approvePage.text).toContain('Signed in as Bob');
    expect((await approve(browser, approvePage)).text).toContain('Device connected');
    const tokens = await poll(stale.deviceCode, 'device-tablet-bob');
    expect(tokens.status).toBe(200);
    expect(JSON.parse(Buffer.from(String(tokens.body.access_token).split('.')[1]!, 'base64url').toString()) as { sub: string }).toMatchObject({ sub: bobId });
  });

  it("a sign-in form posted with the token of another sign-in is refused (403)", async () => {
    const one = await connectDevice(new Browser(t), 'device-token-one');
    const browser = new Browser(t);
    const two = await connectDevice(browser, 'device-token-two');
    const refused = await browser.request('POST', formAction(two.page.text), { csrf: field(one.page.text, 'csrf'), ...ANN });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ error: { code: 'forbidden' } });
  });

  it('the web app, signed in once, is signed in again (a new tab) without asking, however old the sign-in', async () => {
    const browser = new Browser(t);
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: 'cardshelf-web',
      response_type: 'code',
      redirect_uri: 'http://localhost/app/callback',
      scope: 'openid profile offline_access',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    /** Follows the engine's redirects until a page or the app's callback; answers where it stopped. */
    const untilCallback = async (from: Answer): Promise<Answer> => {
      let answer = from;
      for (let i = 0; i < 10 && answer.location && !answer.location.startsWith('http://localhost/app/callback'); i++) answer = await browser.request('GET', answer.location);
      return answer;
    };
    const authorize = async (): Promise<Answer> => untilCallback(await browser.request('GET', `/authorize?${query.toString()}`));
    const first = await authorize();
    expect(first.text).toContain('<h1>Sign in</h1>');
    // Cardshelf's own app is not approved by anyone: signed in, straight back to it (src/oauth/first-party.ts).
    const signedIn = await untilCallback(await browser.request('POST', formAction(first.text), { csrf: field(first.text, 'csrf'), ...ANN }));
    expect(signedIn.location).toMatch(/^http:\/\/localhost\/app\/callback\?code=/);

    await ageSignIn(60 * 60);
    const again = await authorize();
    expect(again.status, again.text.slice(-600)).toBe(303);
    expect(again.location).toMatch(/^http:\/\/localhost\/app\/callback\?code=/);
  });

  it('the session cookie has no expiry (it ends with the browser), and the session ends 12 hours after signing in', async () => {
    const browser = new Browser(t);
    const device = await startDevice('device-cookie');
    const entry = await browser.request('GET', '/activate');
    const confirm = await browser.request('POST', '/activate', { xsrf: field(entry.text, 'xsrf'), user_code: device.user_code });
    const signInPage = await browser.follow(await browser.request('POST', '/activate', { xsrf: field(confirm.text, 'xsrf'), user_code: field(confirm.text, 'user_code'), confirm: 'yes' }));
    const signedIn = await browser.request('POST', formAction(signInPage.text), { csrf: field(signInPage.text, 'csrf'), ...ANN });
    let cookies: string[] = [];
    let answer = signedIn;
    // The session cookie is set on the engine's answer that follows the sign-in.
    for (let i = 0; i < 5 && answer.location; i++) {
      cookies = cookies.concat([answer.headers['set-cookie'] ?? []].flat() as string[]);
      answer = await browser.request('GET', answer.location);
    }
    const session = cookies.filter((c) => /^_session=/.test(c));
    expect(session.length, cookies.join('\n')).toBeGreaterThan(0);
    for (const c of session) expect(c).not.toMatch(/expires=|max-age=/i);

    const store = openStore(t.config.database);
    try {
      const rows = await store.db.selectFrom('oauth_records').select(['payload', 'expires_at']).where('model', '=', 'Session').where('account_id', '=', userId).execute();
      const newest = rows.map((r) => ({ loginTs: (JSON.parse(r.payload) as { loginTs: number }).loginTs, expires: Date.parse(r.expires_at!) })).sort((a, b) => b.loginTs - a.loginTs)[0]!;
      expect(Math.abs(newest.expires - (newest.loginTs + 12 * 3600) * 1000)).toBeLessThan(5_000);
    } finally {
      await store.db.destroy();
    }
  });

  it('signing out of /account ends the sign-in of the pages too: the next device asks for the password', async () => {
    const browser = new Browser(t);
    const first = await connectDevice(browser, 'device-seven');
    await approve(browser, await signIn(browser, first.page));
    expect((await connectDevice(browser, 'device-eight')).page.text).toContain('Approve this app?');

    const form = await browser.request('GET', '/account');
    await browser.request('POST', '/account/sign-in', { csrf: field(form.text, 'csrf'), ...ANN });
    const page = await browser.request('GET', '/account');
    expect(page.text).toContain('Signed in as Ann');
    const out = await browser.request('POST', '/account/sign-out', { csrf: field(page.text, 'csrf') });
    expect(out.status).toBe(303);
    expect((await browser.request('GET', '/account')).text).toContain('Sign in to see the apps');
    expect((await connectDevice(browser, 'device-nine')).page.text).toContain('<h1>Sign in</h1>');
  });
});
