import { createHash, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { THROTTLE_RULES } from '../../src/accounts/throttle.js';
import type { Store } from '../../src/db/dialect.js';
import { openStore } from '../../src/db/store.js';
import { addClient } from '../../src/oauth/clients.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { Browser, field, formAction, type Answer } from '../support/oauth-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * The edges of the embedded sign-in engine (issue 33): other spellings of its paths, hostile
 * Host headers, a code form posted without its session, a device flow in a registered app's
 * name, and values the database cannot store.
 */

const EMAIL = 'ann@example.com';
const PASSWORD = 'correct horse battery';
const SCOPE = 'openid profile offline_access';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const NOT_VERIFIED = 'Cardshelf has not verified this app';

const cookiesOf = (answer: LightMyRequestResponse): string =>
  (answer.cookies as { name: string; value: string }[]).map((c) => `${c.name}=${c.value}`).join('; ');

describe(`the sign-in engine's edges on ${testDialect()}`, { timeout: 120_000 }, () => {
  let t: TestApp;
  let store: Store;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: 'http://localhost' });
    // The app's own store is not exposed; a second connection to the same database looks inside.
    store = openStore(t.config.database);
    await createAccountService(store).add({ email: EMAIL, displayName: 'Ann', password: PASSWORD });
    await addClient(store, { clientId: 'myapp', name: 'My App', redirectUris: ['https://myapp.example/callback'] }, t.config.auth.audience);
  });
  afterAll(async () => {
    await store?.db.destroy();
    await t?.close();
  });

  const deviceCodeRows = async (): Promise<number> =>
    (await store.db.selectFrom('oauth_records').select('id').where('model', '=', 'DeviceCode').execute()).length;

  describe('row 1: every spelling of a throttled path is throttled, or never reaches the engine', () => {
    // Fastify ignores trailing and doubled slashes and decodes the path before matching; it is
    // case-sensitive, and does not take %2F for a slash.
    const spellings: Record<string, string[]> = {
      deviceCode: ['/oauth/device/code/', '//oauth/device/code', '/oauth//device/code', '/OAUTH/device/code', '/%2Foauth/device/code', '/oauth%2Fdevice%2Fcode', '/oauth/device/cod%65'],
      activate: ['/activate/', '//activate', '/activate//', '/ACTIVATE', '/%2Factivate', '/%61ctivate'],
    };
    let addresses = 0;
    const freshAddress = (): string => `198.18.${Math.floor(++addresses / 250)}.${addresses % 250}`;

    it.each(spellings.deviceCode!)('POST %s: 11 device codes, then 429, like the exact path; or 404', async (url) => {
      const address = freshAddress();
      const before = await deviceCodeRows();
      const statuses: number[] = [];
      for (let i = 0; i < THROTTLE_RULES.deviceCode.free + 3; i++) {
        const answer = await t.app.inject({ method: 'POST', url, remoteAddress: address, headers: FORM, payload: `client_id=yoto-device-client&scope=${encodeURIComponent(SCOPE)}` });
        statuses.push(answer.statusCode);
        if (answer.statusCode === 200) expect(JSON.parse(answer.body)).toMatchObject({ interval: 5 });
      }
      const written = (await deviceCodeRows()) - before;
      if (statuses[0] === 404) {
        expect(statuses).toEqual(statuses.map(() => 404));
        expect(written).toBe(0);
      } else {
        const free = THROTTLE_RULES.deviceCode.free + 1;
        expect(statuses).toEqual([...Array<number>(free).fill(200), 429, 429]);
        expect(written).toBe(free);
      }
    });

    it.each(spellings.activate!)('wrong codes posted to %s: 11 checked, then 429, like the exact path; or 404', async (url) => {
      const address = freshAddress();
      const entry = await t.app.inject({ method: 'GET', url: '/activate', remoteAddress: address });
      let cookie = cookiesOf(entry);
      let page = entry.body;
      const statuses: number[] = [];
      for (let i = 0; i < THROTTLE_RULES.codeEntry.free + 3; i++) {
        const answer = await t.app.inject({
          method: 'POST',
          url,
          remoteAddress: address,
          headers: { ...FORM, cookie },
          payload: new URLSearchParams({ xsrf: page.includes('name="xsrf"') ? field(page, 'xsrf') : '', user_code: 'BCDF-GHJK' }).toString(),
        });
        statuses.push(answer.statusCode);
        if (answer.statusCode === 200) {
          expect(answer.body).toContain('That code is not right');
          page = answer.body;
          cookie = cookiesOf(answer) || cookie;
        }
      }
      if (statuses[0] === 404) {
        expect(statuses).toEqual(statuses.map(() => 404));
      } else {
        const free = THROTTLE_RULES.codeEntry.free + 1;
        expect(statuses).toEqual([...Array<number>(free).fill(200), 429, 429]);
        // The code in the address is refused too, whichever spelling: the counter is the address's.
        expect((await t.app.inject({ method: 'GET', url: `${url}?user_code=BCDF-GHJK`, remoteAddress: address })).statusCode).toBe(429);
      }
    });
  });

  describe('row 13: a code form posted without its sign-in session', () => {
    const post = (cookie?: string) =>
      t.app.inject({ method: 'POST', url: '/activate', remoteAddress: '198.19.0.1', headers: { ...FORM, ...(cookie ? { cookie } : {}) }, payload: 'xsrf=abc&user_code=BCDF-GHJK' });
    const expectExpiredPage = (answer: LightMyRequestResponse): void => {
      expect(answer.statusCode, answer.body).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expect(answer.headers['content-security-policy']).toContain("default-src 'none'");
      expect(answer.body).toContain('This page has expired');
    };

    it('with no cookie: a 400 page', async () => {
      expectExpiredPage(await post());
    });

    it('with the cookie of a session that has ended: the form again, with a 400 and a new session behind it', async () => {
      const entry = await t.app.inject({ method: 'GET', url: '/activate', remoteAddress: '198.19.0.2' });
      const cookie = cookiesOf(entry);
      expect(cookie).toContain('_session=');
      const id = /_session=([^;]+)/.exec(cookie)![1]!;
      await store.db.deleteFrom('oauth_records').where('model', '=', 'Session').where('id', '=', id).execute();
      const again = await post(cookie);
      expect(again.statusCode, again.body).toBe(400);
      expect(again.body).toContain('name="user_code"');
      // The engine stored a session for that cookie again: the form shown works.
      const code = await t.app.inject({
        method: 'POST',
        url: '/activate',
        remoteAddress: '198.19.0.2',
        headers: { ...FORM, cookie: cookiesOf(again) || cookie },
        payload: new URLSearchParams({ xsrf: field(again.body, 'xsrf'), user_code: 'BCDF-GHJK' }).toString(),
      });
      expect(code.statusCode).toBe(200);
      expect(code.body).toContain('That code is not right');
    });
  });

  describe('row 15: a device flow never shows its app as verified', () => {
    async function deviceFlowPages(clientId: string): Promise<{ confirm: Answer; signIn: Answer; approve: Answer }> {
      const start = await t.app.inject({ method: 'POST', url: '/oauth/device/code', remoteAddress: '198.19.1.1', headers: FORM, payload: `client_id=${clientId}&scope=${encodeURIComponent(SCOPE)}` });
      expect(start.statusCode, start.body).toBe(200);
      const userCode = (JSON.parse(start.body) as { user_code: string }).user_code;
      const browser = new Browser(t, '198.19.1.2');
      const entry = await browser.request('GET', '/activate');
      const confirm = await browser.request('POST', '/activate', { xsrf: field(entry.text, 'xsrf'), user_code: userCode });
      const signIn = await browser.follow(await browser.request('POST', '/activate', { xsrf: field(confirm.text, 'xsrf'), user_code: userCode, confirm: 'yes' }));
      const approve = await browser.follow(await browser.request('POST', formAction(signIn.text), { csrf: field(signIn.text, 'csrf'), email: EMAIL, password: PASSWORD }));
      return { confirm, signIn, approve };
    }

    it.each([
      ['myapp', 'registered with `cardshelf client add`', 'My App (<code>myapp</code>)'],
      ['yoto-device-client', 'not registered', '<code>yoto-device-client</code>'],
    ])('%s (%s): the code, sign-in and approval pages all say it is not verified', async (clientId, _what, named) => {
      const { confirm, signIn, approve } = await deviceFlowPages(clientId);
      for (const [step, page, title] of [
        ['confirm', confirm, 'Is this your device?'],
        ['sign in', signIn, 'Sign in'],
        ['approve', approve, 'Approve this app?'],
      ] as const) {
        expect(page.status, step).toBe(200);
        expect(page.text, step).toContain(title);
        expect(page.text, step).toContain(named);
        expect(page.text, step).toContain(NOT_VERIFIED);
      }
    });

    it('the same registered app through its registered redirect is named without the warning', async () => {
      const query = new URLSearchParams({
        client_id: 'myapp',
        response_type: 'code',
        redirect_uri: 'https://myapp.example/callback',
        scope: SCOPE,
        code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
        code_challenge_method: 'S256',
      });
      const browser = new Browser(t, '198.19.1.3');
      const signIn = await browser.follow(await browser.request('GET', `/authorize?${query.toString()}`));
      expect(signIn.text).toContain('My App (<code>myapp</code>)');
      expect(signIn.text).not.toContain(NOT_VERIFIED);
    });
  });

  describe('row 18: NUL in what the engine looks up', () => {
    it.each([
      ['/oauth/device/code', { client_id: '\u0000', scope: SCOPE }],
      ['/oauth/token', { client_id: '\u0000', grant_type: 'refresh_token', refresh_token: 'x' }],
      ['/oauth/token', { client_id: 'yoto-device-client', grant_type: 'refresh_token', refresh_token: 'a\u0000b' }],
      ['/oauth/token', { client_id: 'yoto-device-client', grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: '\u0000' }],
      ['/oauth/revoke', { client_id: 'yoto-device-client', token: '\u0000' }],
      ['/oauth/revoke', { client_id: '\u0000', token: 'x' }],
    ])('POST %s %j: 400 invalid_request in the OAuth shape', async (url, form) => {
      const answer = await t.app.inject({ method: 'POST', url, remoteAddress: '198.19.2.1', headers: FORM, payload: new URLSearchParams(form).toString() });
      expect(answer.statusCode, answer.body).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({ error: 'invalid_request', error_description: 'a parameter contains the NUL character (U+0000)' });
    });

    it('GET /authorize?client_id=%00: a 400 page', async () => {
      const answer = await t.app.inject({ method: 'GET', url: '/authorize?client_id=%00&response_type=code&scope=openid', remoteAddress: '198.19.2.2' });
      expect(answer.statusCode, answer.body).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expect(answer.body).toContain('a parameter contains the NUL character');
    });
  });
});

describe(`row 7: the engine's URLs come from PUBLIC_BASE_URL on ${testDialect()}`, { timeout: 120_000 }, () => {
  const BASE = 'https://cardshelf.example';
  let t: TestApp;
  beforeAll(async () => {
    // Trusting any proxy: even then, forwarded headers name no URL the engine prints.
    t = await startTestApp({ PUBLIC_BASE_URL: BASE, TRUST_PROXY: 'true' });
  });
  afterAll(async () => t?.close());

  /** Every URL in a JSON document or an HTML page. */
  const urlsIn = (text: string): string[] => [...text.matchAll(/https?:\/\/[^"'\s<>]+/g)].map((m) => m[0]);

  it.each([
    ['the public host over plain HTTP (a proxy ending TLS)', { host: 'cardshelf.example' }],
    ['a hostile Host', { host: 'evil.example' }],
    ['a hostile Host with a port', { host: 'evil.example:8443' }],
    ['hostile forwarded headers', { host: 'cardshelf.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http', forwarded: 'host=evil.example;proto=http' }],
  ])('%s: discovery, the device authorization and the code form name only %s', async (_what, headers) => {
    const discovery = await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration', headers });
    expect(discovery.statusCode).toBe(200);
    const document = JSON.parse(discovery.body) as Record<string, unknown>;
    expect(document.issuer).toBe(BASE);
    expect(document.jwks_uri).toBe(`${BASE}/.well-known/jwks.json`);
    expect(document.device_authorization_endpoint).toBe(`${BASE}/oauth/device/code`);
    expect(document.token_endpoint).toBe(`${BASE}/oauth/token`);
    const discovered = urlsIn(discovery.body);
    expect(discovered.length).toBeGreaterThan(5);
    for (const url of discovered) expect(url === BASE || url.startsWith(`${BASE}/`), url).toBe(true);

    const device = await t.app.inject({ method: 'POST', url: '/oauth/device/code', headers: { ...headers, ...FORM }, payload: 'client_id=yoto-device-client&scope=openid' });
    expect(device.statusCode, device.body).toBe(200);
    const answer = JSON.parse(device.body) as { verification_uri: string; verification_uri_complete: string; user_code: string };
    expect(answer.verification_uri).toBe(`${BASE}/activate`);
    expect(answer.verification_uri_complete).toBe(`${BASE}/activate?user_code=${answer.user_code}`);

    const form = await t.app.inject({ method: 'GET', url: '/activate', headers });
    expect(formAction(form.body)).toBe(`${BASE}/activate`);
    for (const url of urlsIn(form.body)) expect(url.startsWith(`${BASE}/`), url).toBe(true);
    // Its cookies are for the https address: Secure, though this connection is plain HTTP.
    for (const cookie of [form.headers['set-cookie']].flat()) expect(cookie).toMatch(/; secure/i);
  });
});
