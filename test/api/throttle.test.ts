import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { createThrottle, delayAfter, sweepThrottle, THROTTLE_RULES } from '../../src/accounts/throttle.js';
import { buildApp } from '../../src/app.js';
import type { Store } from '../../src/db/dialect.js';
import { openStore } from '../../src/db/store.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { Browser, field, formAction, type Answer } from '../support/oauth-browser.js';
import { testDialect } from '../support/test-database.js';

const EMAIL = 'ann@example.com';
const PASSWORD = 'correct horse battery';

describe('the delays', () => {
  it('none within the free attempts, then 2 s doubling up to 15 minutes', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => delayAfter(n, 3))).toEqual([0, 0, 0, 2, 4, 8, 16]);
    expect(delayAfter(3 + 10, 3)).toBe(900);
    expect(delayAfter(3 + 1000, 3)).toBe(900);
  });
});

describe(`throttling on ${testDialect()}`, { timeout: 120_000 }, () => {
  let t: TestApp;
  let store: Store;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: 'http://localhost' });
    // The app's own store is not exposed; a second connection to the same database looks inside.
    store = openStore(t.config.database);
    await createAccountService(store).add({ email: EMAIL, displayName: 'Ann', password: PASSWORD });
  });
  afterAll(async () => {
    await store?.db.destroy();
    await t?.close();
  });

  /** Time passes for the counters: their last attempt and lock move `seconds` into the past. */
  async function elapse(seconds: number): Promise<void> {
    const rows = await store.db.selectFrom('throttle_counters').selectAll().execute();
    for (const row of rows) {
      const back = (iso: string) => new Date(Date.parse(iso) - seconds * 1000).toISOString();
      await store.db
        .updateTable('throttle_counters')
        .set({ last_attempt_at: back(row.last_attempt_at), locked_until: back(row.locked_until) })
        .where('key', '=', row.key)
        .execute();
    }
  }

  /** The counters whose key is like `pattern` stay locked for 15 minutes. */
  async function lockLonger(pattern: string): Promise<void> {
    const locked = await store.db.updateTable('throttle_counters').set({ locked_until: new Date(Date.now() + 900_000).toISOString() }).where('key', 'like', pattern).executeTakeFirst();
    expect(locked.numUpdatedRows).toBe(1n);
  }

  const requestDeviceCode = (address: string, app = t.app) =>
    app.inject({
      method: 'POST',
      url: '/oauth/device/code',
      remoteAddress: address,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ client_id: 'yoto-device-client', scope: 'openid profile offline_access' }).toString(),
    });

  /** A browser (a new one, or `browser` with its cookies) at the sign-in page of a fresh device sign-in, from `address`. */
  async function signInPage(address: string, browser = new Browser(t, address)): Promise<{ browser: Browser; page: Answer }> {
    const device = JSON.parse((await requestDeviceCode(address)).body) as { user_code: string };
    const entry = await browser.request('GET', '/activate');
    const confirm = await browser.request('POST', '/activate', { xsrf: field(entry.text, 'xsrf'), user_code: device.user_code });
    const page = await browser.follow(
      await browser.request('POST', '/activate', { xsrf: field(confirm.text, 'xsrf'), user_code: field(confirm.text, 'user_code'), confirm: 'yes' }),
    );
    expect(page.text).toContain('Sign in');
    return { browser, page };
  }

  const attempt = (s: { browser: Browser; page: Answer }, email: string, password: string) =>
    s.browser.request('POST', formAction(s.page.text), { csrf: field(s.page.text, 'csrf'), email, password });

  /** An answer as a person sees it, whatever the email typed (the page shows it back). */
  const shown = (a: Answer, email: string) => ({
    status: a.status,
    retryAfter: a.headers['retry-after'],
    text: a.text
      .replaceAll(email, 'EMAIL')
      .replace(/\/interaction\/[^/"]+/g, '/interaction/UID')
      .replace(/name="csrf" value="[^"]*"/g, 'name="csrf"')
      .replace(/data-csrf="[^"]*"/g, 'data-csrf'),
  });

  it('failed sign-ins per email: 4 answered, then 429 with Retry-After growing 2 s, 4 s; the same answers for an email with no account; success clears', async () => {
    const seen: Record<string, ReturnType<typeof shown>[]> = {};
    for (const [email, address] of [
      [EMAIL, '192.0.2.1'],
      ['nobody@example.com', '192.0.2.2'],
    ] as const) {
      const s = await signInPage(address);
      const answers: Answer[] = [];
      for (let i = 0; i < 5; i++) answers.push(await attempt(s, email, 'not the password'));
      expect(answers.slice(0, 4).map((a) => a.status)).toEqual([200, 200, 200, 200]);
      for (const a of answers.slice(0, 4)) expect(a.text).toContain('do not match an account');
      expect(answers[4]!.status).toBe(429);
      expect(answers[4]!.headers['retry-after']).toBe('2');
      expect(answers[4]!.text).toContain('Too many attempts to sign in. Try again in 2 seconds.');
      // While locked, even the right password is refused: guessing cannot go on meanwhile.
      const locked = await attempt(s, email, PASSWORD);
      expect(locked.status).toBe(429);

      await elapse(3);
      const fifth = await attempt(s, email, 'still not it');
      expect(fifth.status).toBe(200);
      const next = await attempt(s, email, PASSWORD);
      expect(next.status).toBe(429);
      expect(next.headers['retry-after']).toBe('4');
      seen[email] = [...answers, locked, fifth, next].map((a) => shown(a, email));
      await elapse(5);
    }
    expect(seen['nobody@example.com']).toEqual(seen[EMAIL]);

    // Another address is refused as well while the email is locked: the count is per email.
    const elsewhere = await signInPage('192.0.2.3');
    await attempt(elsewhere, EMAIL, 'wrong again');
    expect((await attempt(elsewhere, EMAIL, PASSWORD)).status).toBe(429);
    await elapse(10);
    const signedIn = await attempt(elsewhere, EMAIL, PASSWORD);
    expect(signedIn.status).toBe(303);
    const left = await store.db.selectFrom('throttle_counters').select('key').where('key', '=', `signInEmail:${EMAIL}`).execute();
    expect(left).toEqual([]);
  });

  it("a known device of the email signs in while guesses from elsewhere lock it; a device guessing wrong locks itself; another email's device cookie is no key", async () => {
    const accounts = createAccountService(store);
    await accounts.add({ email: 'dora@example.com', displayName: 'Dora', password: PASSWORD });
    await accounts.add({ email: 'mallory@example.com', displayName: 'Mallory', password: 'mallory long password' });
    // Dora signs in on her tablet and her phone: each becomes a known device of her email.
    const tablet = new Browser(t, '192.0.2.40');
    const phone = new Browser(t, '192.0.2.41');
    for (const browser of [tablet, phone]) {
      const signedIn = await attempt(await signInPage('192.0.2.40', browser), 'Dora@Example.com', PASSWORD);
      expect(signedIn.status).toBe(303);
      expect(String(signedIn.headers['set-cookie'])).toMatch(/cardshelf_device=[^;]+; Max-Age=7776000; Path=\/; HttpOnly; SameSite=Lax/);
    }
    // Mallory signs in to her own account (her browser gets her own device cookie), then guesses Dora's password.
    const mallory = new Browser(t, '203.0.113.66');
    expect((await attempt(await signInPage('203.0.113.66', mallory), 'mallory@example.com', 'mallory long password')).status).toBe(303);
    const guessing = await signInPage('203.0.113.66', mallory);
    for (let i = 0; i < 4; i++) expect((await attempt(guessing, 'dora@example.com', `guess ${i}`)).status).toBe(200);
    // As locked as more guesses would leave it (15 minutes), so a slow machine does not outlast the 2 s lock.
    await lockLonger('signInEmail:dora@example.com');
    expect((await attempt(guessing, 'dora@example.com', PASSWORD)).status).toBe(429);
    // From a fresh browser anywhere else, the email is locked too.
    expect((await attempt(await signInPage('198.51.100.99'), 'dora@example.com', PASSWORD)).status).toBe(429);

    // Dora's known tablet is not locked out: it signs in, on an app's sign-in and on the account page.
    expect((await attempt(await signInPage('192.0.2.40', tablet), 'dora@example.com', PASSWORD)).status).toBe(303);
    const accountForm = await tablet.request('GET', '/account');
    expect((await tablet.request('POST', '/account/sign-in', { csrf: field(accountForm.text, 'csrf'), email: 'dora@example.com', password: PASSWORD })).status).toBe(303);
    // Her success does not unlock the email for the others: the guessing stays held back.
    expect((await attempt(guessing, 'dora@example.com', PASSWORD)).status).toBe(429);

    // A known device guessing wrong is counted on its own: it locks itself, not her phone.
    const onTablet = await signInPage('192.0.2.40', tablet);
    for (let i = 0; i < 4; i++) expect((await attempt(onTablet, 'dora@example.com', `typo ${i}`)).status).toBe(200);
    await lockLonger('signInDevice:%');
    expect((await attempt(onTablet, 'dora@example.com', PASSWORD)).status).toBe(429);
    expect((await attempt(await signInPage('192.0.2.41', phone), 'dora@example.com', PASSWORD)).status).toBe(303);
    await elapse(3600);
  });

  it('failed sign-ins per address: 21 answered across emails, then 429 for any email', async () => {
    const s = await signInPage('198.51.100.7');
    for (let i = 1; i <= THROTTLE_RULES.signInAddress.free + 1; i++) {
      const a = await attempt(s, `guess${i}@example.com`, 'not the password');
      expect(a.status, `attempt ${i}`).toBe(200);
    }
    const refused = await attempt(s, 'fresh@example.com', 'not the password');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('2');
    // Another address is not affected.
    const other = await signInPage('198.51.100.8');
    expect((await attempt(other, 'fresh@example.com', 'not the password')).status).toBe(200);
  });

  it('wrong codes at /activate: 11 answered, then 429 with Retry-After; other addresses unaffected', async () => {
    const browser = new Browser(t, '203.0.113.5');
    let page = await browser.request('GET', '/activate');
    for (let i = 1; i <= THROTTLE_RULES.codeEntry.free + 1; i++) {
      page = await browser.request('POST', '/activate', { xsrf: field(page.text, 'xsrf'), user_code: 'BCDF-GHJK' });
      expect(page.status, `code ${i}`).toBe(200);
      expect(page.text).toContain('That code is not right');
    }
    const refused = await browser.request('POST', '/activate', { xsrf: field(page.text, 'xsrf'), user_code: 'BCDF-GHJK' });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('2');
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.text).toContain('Too many codes were entered from here');
    expect((await browser.request('GET', '/activate?user_code=BCDF-GHJK')).status).toBe(429);

    const other = new Browser(t, '203.0.113.6');
    const otherPage = await other.request('GET', '/activate');
    expect((await other.request('POST', '/activate', { xsrf: field(otherPage.text, 'xsrf'), user_code: 'BCDF-GHJK' })).status).toBe(200);
  });

  it('device-code requests: 11 answered, then 429 too_many_requests with Retry-After, seen by a second instance on the same database', async () => {
    const address = '203.0.113.9';
    const second = await buildApp(t.config);
    try {
      await second.ready();
      for (let i = 1; i <= THROTTLE_RULES.deviceCode.free + 1; i++) expect((await requestDeviceCode(address)).statusCode, `request ${i}`).toBe(200);
      const refused = await requestDeviceCode(address, second);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBe('2');
      expect(JSON.parse(refused.body)).toMatchObject({ error: 'too_many_requests' });
      expect((await requestDeviceCode('203.0.113.10', second)).statusCode).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('counts from parallel attempts are all kept; a quiet spell forgets them; the sweep removes old counters', async () => {
    const throttle = createThrottle(store);
    const counter = { rule: 'signInEmail', subject: 'parallel@example.com' } as const;
    const waits = await Promise.all(Array.from({ length: 8 }, () => throttle.take([counter])));
    // Only the free attempts and the one that locks get through; the others wait.
    expect(waits.filter((w) => w === 0)).toHaveLength(THROTTLE_RULES.signInEmail.free + 1);
    expect(await throttle.waitSeconds([counter])).toBeGreaterThan(0);

    await elapse(3600 + 60);
    expect(await throttle.take([counter])).toBe(0);
    const row = await store.db.selectFrom('throttle_counters').selectAll().where('key', '=', 'signInEmail:parallel@example.com').executeTakeFirstOrThrow();
    expect(row.attempts).toBe(1);

    await elapse(3600 + 60);
    expect(await sweepThrottle(store)).toBeGreaterThanOrEqual(1);
    expect(await store.db.selectFrom('throttle_counters').select('key').where('key', '=', 'signInEmail:parallel@example.com').execute()).toEqual([]);
  });
});
