import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHALLENGE_TTL_MS, createPasskeyService, relyingParty, sweepPasskeyChallenges } from '../../src/accounts/passkeys.js';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { Browser, field, formAction, tokenRequest, type Answer } from '../support/oauth-browser.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';
import { testDialect } from '../support/test-database.js';

const ORIGIN = 'http://localhost';
const ANN = { email: 'ann@example.com', password: 'correct horse battery' };
const BOB = { email: 'bob@example.com', password: 'another long password' };
const CAROL = { email: 'carol@example.com', password: 'yet another password' };
const REDIRECT = 'http://127.0.0.1:9/callback';

/** A data attribute of the passkey form. */
const dataOf = (html: string, name: string): string => {
  const match = new RegExp(`id="passkey-form"[^>]* data-${name}="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no passkey form with data-${name} in ${html.slice(0, 800)}`);
  return match[1]!.replace(/&amp;/g, '&');
};

const errorOf = (answer: Answer): string => (answer.json as { error: { message: string } }).error.message;

describe(`passkeys on ${testDialect()}`, { timeout: 120_000 }, () => {
  let t: TestApp;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: ORIGIN });
    const store = openStore(t.config.database);
    try {
      const accounts = createAccountService(store);
      for (const [who, name] of [[ANN, 'Ann'], [BOB, 'Bob'], [CAROL, 'Carol']] as const) ids[who.email] = (await accounts.add({ ...who, displayName: name })).userId;
    } finally {
      await store.db.destroy();
    }
  });
  afterAll(async () => t?.close());

  /** A browser signed in to the account page, and the account page's passkey form values. */
  async function accountPage(who: typeof ANN): Promise<{ browser: Browser; csrf: string; html: string }> {
    const browser = new Browser(t);
    const form = await browser.request('GET', '/account');
    const signedIn = await browser.request('POST', '/account/sign-in', { csrf: field(form.text, 'csrf'), ...who });
    expect(signedIn.status, signedIn.text).toBe(303);
    const page = await browser.request('GET', '/account');
    return { browser, csrf: dataOf(page.text, 'csrf'), html: page.text };
  }

  /** Adds a software passkey to `who`'s account through the account page; answers it. */
  async function addPasskey(who: typeof ANN, name: string): Promise<SoftAuthenticator> {
    const { browser, csrf } = await accountPage(who);
    const options = await browser.json('/account/passkeys/options', { csrf });
    expect(options.status, options.text).toBe(200);
    const authenticator = new SoftAuthenticator(ORIGIN);
    const added = await browser.json('/account/passkeys', { csrf, name, response: authenticator.register(options.json) });
    expect(added.status, added.text).toBe(201);
    return authenticator;
  }

  /** An app's sign-in (PKCE, loopback redirect) up to its sign-in page. */
  async function startSignIn(address = '127.0.0.1') {
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: 'passkey-app',
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid offline_access',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const browser = new Browser(t, address);
    const page = await browser.follow(await browser.request('GET', `/authorize?${query}`));
    expect(page.text).toContain('Sign in with a passkey');
    const passkey = { options: dataOf(page.text, 'options'), verify: dataOf(page.text, 'verify'), csrf: dataOf(page.text, 'csrf') };
    const optionsFor = async () => {
      const answer = await browser.json(passkey.options, { csrf: passkey.csrf });
      expect(answer.status, answer.text).toBe(200);
      return answer.json as { challenge: string; rpId: string; userVerification: string };
    };
    return { browser, verifier, passkey, optionsFor };
  }

  it('the account page adds a passkey (options bound to the account, the answer checked); it is listed by name', async () => {
    const { browser, csrf, html } = await accountPage(ANN);
    expect(html).toContain('<h2>Passkeys</h2>');
    expect(html).toContain('You have no passkeys yet.');
    expect(html).toContain('<script src="/sign-in/passkeys.js" defer>');

    const options = await browser.json('/account/passkeys/options', { csrf });
    expect(options.status).toBe(200);
    expect(options.headers['cache-control']).toBe('no-store');
    const json = options.json as { rp: { id: string; name: string }; user: { name: string; id: string }; challenge: string; authenticatorSelection: { residentKey: string; userVerification: string } };
    expect(json.rp).toEqual({ id: 'localhost', name: 'Cardshelf' });
    expect(json.user.name).toBe(ANN.email);
    expect(Buffer.from(json.user.id, 'base64url').toString()).toBe(ids[ANN.email]);
    expect(json.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });

    const authenticator = new SoftAuthenticator(ORIGIN);
    const added = await browser.json('/account/passkeys', { csrf, name: 'Ann <laptop>', response: authenticator.register(options.json) });
    expect(added.status, added.text).toBe(201);
    expect(added.json).toMatchObject({ passkey: { id: authenticator.id, name: 'Ann <laptop>' }, location: '/account?notice=passkey-added' });

    const page = await browser.request('GET', '/account?notice=passkey-added');
    expect(page.text).toContain('Your passkey was added');
    expect(page.text).toContain('Ann &lt;laptop&gt;');
    expect(page.text).toContain('not used yet');
    expect(page.text).toContain(`name="id" value="${authenticator.id}"`);

    // The same answer again: its challenge was used up.
    const again = await browser.json('/account/passkeys', { csrf, name: 'again', response: authenticator.register(options.json) });
    expect(again.status).toBe(400);
    expect(errorOf(again)).toMatch(/expired or was not made here/);
  });

  it('refuses a registration with a foreign, made-up or expired challenge, another origin, no CSRF value, or signed out, each a clear 4xx', async () => {
    const ann = await accountPage(ANN);
    const bob = await accountPage(BOB);
    const bobsOptions = (await bob.browser.json('/account/passkeys/options', { csrf: bob.csrf })).json;

    // Bob's challenge answered in Ann's session: bound to Bob, so refused (and still Bob's to use).
    const foreign = await ann.browser.json('/account/passkeys', { csrf: ann.csrf, name: 'x', response: new SoftAuthenticator(ORIGIN).register(bobsOptions) });
    expect(foreign.status).toBe(400);
    expect(foreign.json).toMatchObject({ error: { code: 'bad-request' } });
    expect(errorOf(foreign)).toMatch(/expired or was not made here/);

    const annsOptions = (await ann.browser.json('/account/passkeys/options', { csrf: ann.csrf })).json;
    const madeUp = await ann.browser.json('/account/passkeys', { csrf: ann.csrf, response: new SoftAuthenticator(ORIGIN).register(annsOptions, { challenge: randomBytes(32).toString('base64url') }) });
    expect(madeUp.status).toBe(400);
    const otherOrigin = await ann.browser.json('/account/passkeys', { csrf: ann.csrf, response: new SoftAuthenticator('https://evil.example').register(annsOptions) });
    expect(otherOrigin.status).toBe(400);
    expect(errorOf(otherOrigin)).toMatch(/origin/i);

    const noShape = await ann.browser.json('/account/passkeys', { csrf: ann.csrf, response: 'not a credential' });
    expect(noShape.status).toBe(400);
    expect(errorOf(noShape)).toMatch(/not a WebAuthn credential/);

    const noCsrf = await ann.browser.json('/account/passkeys/options', { csrf: 'forged.value' });
    expect(noCsrf.status).toBe(403);
    const missing = await ann.browser.json('/account/passkeys/options', {});
    expect(missing.status).toBe(400);

    const stranger = new Browser(t);
    const signedOut = await stranger.json('/account/passkeys/options', { csrf: ann.csrf });
    expect(signedOut.status).toBe(401);

    // Bob's own challenge still works for Bob: the foreign try did not use it up.
    const bobs = await bob.browser.json('/account/passkeys', { csrf: bob.csrf, name: 'Bob phone', response: new SoftAuthenticator(ORIGIN).register(bobsOptions) });
    expect(bobs.status, bobs.text).toBe(201);
  });

  it("an app's sign-in completes with a passkey alone: approve, code, token for the passkey's account", async () => {
    const authenticator = await addPasskey(CAROL, 'Carol key');
    const { browser, verifier, passkey, optionsFor } = await startSignIn();
    const options = await optionsFor();
    expect(options).toMatchObject({ rpId: 'localhost', userVerification: 'required' });
    const signedIn = await browser.json(passkey.verify, { csrf: passkey.csrf, response: authenticator.authenticate(options) });
    expect(signedIn.status, signedIn.text).toBe(200);
    const approve = await browser.follow(await browser.request('GET', (signedIn.json as { location: string }).location));
    expect(approve.text).toContain('Signed in as Carol');
    const back = await browser.follow(await browser.request('POST', formAction(approve.text), { csrf: field(approve.text, 'csrf'), decision: 'approve' }));
    const code = new URL(back.location!).searchParams.get('code')!;
    const tokens = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: 'passkey-app', code_verifier: verifier });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    const claims = JSON.parse(Buffer.from(String(tokens.body.access_token).split('.')[1]!, 'base64url').toString()) as { sub: string };
    expect(claims.sub).toBe(ids[CAROL.email]);
    const mine = await t.app.inject({ method: 'GET', url: '/content/mine', headers: { authorization: `Bearer ${tokens.body.access_token}` } });
    expect(mine.statusCode).toBe(200);

    // The account page shows it used.
    const { html } = await accountPage(CAROL);
    expect(html).toContain('Carol key');
    expect(html).toMatch(/last used [A-Z][a-z]{2}, /);
  });

  it('refuses a sign-in with an unknown passkey (401), a challenge of another sign-in or used twice (400), a wrong signature (400), a forged CSRF value (403)', async () => {
    const authenticator = await addPasskey(BOB, 'Bob laptop');
    const one = await startSignIn();
    const two = await startSignIn();

    const unknown = await one.browser.json(one.passkey.verify, { csrf: one.passkey.csrf, response: new SoftAuthenticator(ORIGIN).authenticate(await one.optionsFor()) });
    expect(unknown.status).toBe(401);
    expect(unknown.json).toMatchObject({ error: { code: 'unauthorized' } });
    expect(errorOf(unknown)).toMatch(/not registered/);

    // A challenge handed out for sign-in two, answered in sign-in one.
    const twosOptions = await two.optionsFor();
    const foreign = await one.browser.json(one.passkey.verify, { csrf: one.passkey.csrf, response: authenticator.authenticate(twosOptions) });
    expect(foreign.status).toBe(400);
    expect(errorOf(foreign)).toMatch(/expired or was not made here/);

    const options = await one.optionsFor();
    const tampered = authenticator.authenticate(options);
    tampered.response.signature = Buffer.from(randomBytes(70)).toString('base64url');
    const badSignature = await one.browser.json(one.passkey.verify, { csrf: one.passkey.csrf, response: tampered });
    expect(badSignature.status).toBe(400);
    // That try used the challenge up: the right answer to it is refused now.
    const reused = await one.browser.json(one.passkey.verify, { csrf: one.passkey.csrf, response: authenticator.authenticate(options) });
    expect(reused.status).toBe(400);

    const forged = await one.browser.json(one.passkey.verify, { csrf: 'forged', response: authenticator.authenticate(await one.optionsFor()) });
    expect(forged.status).toBe(403);

    // Sign-in two still takes its own challenge.
    const ok = await two.browser.json(two.passkey.verify, { csrf: two.passkey.csrf, response: authenticator.authenticate(twosOptions) });
    expect(ok.status, ok.text).toBe(200);
  });

  it('failed passkey sign-ins are throttled per address as password ones are (429 with Retry-After); other addresses are not', async () => {
    const address = '192.0.2.77';
    const { browser, passkey, optionsFor } = await startSignIn(address);
    const stranger = new SoftAuthenticator(ORIGIN);
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      statuses.push((await browser.json(passkey.verify, { csrf: passkey.csrf, response: stranger.authenticate(await optionsFor()) })).status);
    }
    // 20 free failures (signInAddress), the 21st counted and locking the address.
    expect(statuses).toEqual(Array.from({ length: 21 }, () => 401));
    const locked = await browser.json(passkey.verify, { csrf: passkey.csrf, response: stranger.authenticate(await optionsFor()) });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(locked.json).toMatchObject({ error: { code: 'rate-limited' } });

    const elsewhere = await startSignIn('192.0.2.78');
    const fine = await elsewhere.browser.json(elsewhere.passkey.verify, { csrf: elsewhere.passkey.csrf, response: stranger.authenticate(await elsewhere.optionsFor()) });
    expect(fine.status).toBe(401);
  });

  it("a passkey signs in while wrong passwords from elsewhere keep the account's email locked", async () => {
    const DEE = { email: 'dee@example.com', password: 'dee has a long password' };
    const store = openStore(t.config.database);
    await createAccountService(store).add({ ...DEE, displayName: 'Dee' });
    await store.db.destroy();
    const authenticator = await addPasskey(DEE, 'Dee key');
    // The password form of an app's sign-in page, from another address.
    const guesser = await startSignIn('203.0.113.70');
    const html = (await guesser.browser.request('GET', guesser.passkey.options.replace(/\/passkey\/options$/, ''))).text;
    const guess = (password: string) => guesser.browser.request('POST', formAction(html), { csrf: field(html, 'csrf'), email: DEE.email, password });
    for (let i = 0; i < 4; i++) expect((await guess(`guess ${i}`)).status).toBe(200);
    expect((await guess(DEE.password)).status).toBe(429);

    const { browser, passkey, optionsFor } = await startSignIn('192.0.2.80');
    const signedIn = await browser.json(passkey.verify, { csrf: passkey.csrf, response: authenticator.authenticate(await optionsFor()) });
    expect(signedIn.status, signedIn.text).toBe(200);
    expect((await browser.follow(await browser.request('GET', (signedIn.json as { location: string }).location))).text).toContain('Signed in as Dee');
  });

  it("removing a passkey (CSRF-guarded form) ends its sign-ins; another account's passkey cannot be removed", async () => {
    const authenticator = await addPasskey(ANN, 'to remove');
    const bob = await accountPage(BOB);
    const page = await accountPage(ANN);
    expect(page.html).toContain(`value="${authenticator.id}"`);
    const csrf = field(page.html, 'csrf');

    const notBobs = await bob.browser.request('POST', '/account/passkeys/remove', { csrf: bob.csrf, id: authenticator.id });
    expect(notBobs.status).toBe(404);
    expect(notBobs.text).toContain('You have no such passkey.');
    const forged = await page.browser.request('POST', '/account/passkeys/remove', { csrf: 'forged', id: authenticator.id });
    expect(forged.status).toBe(403);

    const removed = await page.browser.request('POST', '/account/passkeys/remove', { csrf, id: authenticator.id });
    expect(removed.status).toBe(200);
    expect(removed.text).toContain('The passkey is removed');
    expect(removed.text).not.toContain(`value="${authenticator.id}"`);

    const { browser, passkey, optionsFor } = await startSignIn();
    const refused = await browser.json(passkey.verify, { csrf: passkey.csrf, response: authenticator.authenticate(await optionsFor()) });
    expect(refused.status).toBe(401);
  });

  it('adding or removing a passkey needs the password entered in the last 5 minutes: refused (403) before, done after confirming it', async () => {
    const kept = await addPasskey(BOB, 'kept');
    const { browser, html } = await accountPage(BOB);
    const csrf = field(html, 'csrf');
    // The session's password, 6 minutes old (as if the page were left open on a shared tablet).
    const store = openStore(t.config.database);
    try {
      const old = new Date(Date.now() - 6 * 60_000).toISOString();
      await store.db.updateTable('account_sessions').set({ confirmed_at: old }).where('user_id', '=', ids[BOB.email]!).execute();
    } finally {
      await store.db.destroy();
    }

    const page = await browser.request('GET', '/account');
    expect(page.text).toContain('To add or remove a passkey, enter your password again.');
    expect(page.text).not.toContain('id="passkey-form"');
    expect(page.text).not.toContain('>Remove</button>');
    const options = await browser.json('/account/passkeys/options', { csrf });
    expect(options.status).toBe(403);
    expect(options.json).toMatchObject({ error: { code: 'forbidden' } });
    const added = await browser.json('/account/passkeys', { csrf, name: 'late', response: new SoftAuthenticator(ORIGIN).register({ challenge: 'eA', rp: { id: 'localhost' }, user: { id: 'eA' } }) });
    expect(added.status).toBe(403);
    const removed = await browser.request('POST', '/account/passkeys/remove', { csrf, id: kept.id });
    expect(removed.status).toBe(403);
    expect(removed.text).toContain('Enter your password again before removing a passkey.');
    expect(removed.text).toContain('kept');

    const wrong = await browser.request('POST', '/account/confirm', { csrf, password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('That password is not right.');
    const confirmed = await browser.request('POST', '/account/confirm', { csrf, password: BOB.password });
    expect(confirmed.status).toBe(200);
    expect(confirmed.text).toContain('id="passkey-form"');
    expect((await browser.json('/account/passkeys/options', { csrf })).status).toBe(200);
    const gone = await browser.request('POST', '/account/passkeys/remove', { csrf, id: kept.id });
    expect(gone.status).toBe(200);
    expect(gone.text).toContain('The passkey is removed');
  });

  it('serves the page scripts from this origin, and the pages allow exactly that (no inline script)', async () => {
    const lib = await t.app.inject({ method: 'GET', url: '/sign-in/webauthn.js' });
    expect(lib.statusCode).toBe(200);
    expect(lib.headers['content-type']).toMatch(/^text\/javascript/);
    expect(lib.body).toContain('SimpleWebAuthnBrowser');
    const own = await t.app.inject({ method: 'GET', url: '/sign-in/passkeys.js' });
    expect(own.statusCode).toBe(200);
    expect(own.body).toContain('passkey-status');
    const { html } = await accountPage(ANN);
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/);
    const page = await new Browser(t).request('GET', '/account');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).not.toContain("'unsafe-inline'; script");
  });
});

describe(`passkeys behind an IP address on ${testDialect()}`, { timeout: 120_000 }, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: 'http://127.0.0.1:8080' });
    const store = openStore(t.config.database);
    try {
      await createAccountService(store).add({ ...ANN, displayName: 'Ann' });
    } finally {
      await store.db.destroy();
    }
  });
  afterAll(async () => t?.close());

  it('are not offered (an RP id must be a domain); their endpoints answer a 400 that says why', async () => {
    const browser = new Browser(t);
    const query = new URLSearchParams({ client_id: 'ip-app', response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' });
    const page = await browser.follow(await browser.request('GET', `/authorize?${query}`));
    expect(page.text).toContain('<h1>Sign in</h1>');
    expect(page.text).not.toContain('passkey-form');
    expect(page.text).not.toContain('<script');
    const uid = /\/interaction\/([^/"]+)\/login/.exec(page.text)![1]!;
    const options = await browser.json(`/interaction/${uid}/passkey/options`, { csrf: field(page.text, 'csrf') });
    expect(options.status).toBe(400);
    expect(errorOf(options)).toMatch(/domain name/);

    const form = await browser.request('GET', '/account');
    await browser.request('POST', '/account/sign-in', { csrf: field(form.text, 'csrf'), ...ANN });
    const account = await browser.request('GET', '/account');
    expect(account.text).toContain('Passkeys can be added when this server is reached by a domain name');
    const refused = await browser.json('/account/passkeys/options', { csrf: field(account.text, 'csrf') });
    expect(refused.status).toBe(400);
    expect(errorOf(refused)).toMatch(/domain name/);
  });
});

describe('the relying party', () => {
  it('is the public base URL: its host name the RP id, its origin the one accepted', () => {
    expect(relyingParty('https://cards.example.org/base')).toEqual({ id: 'cards.example.org', origin: 'https://cards.example.org' });
    expect(relyingParty('http://localhost:8080')).toEqual({ id: 'localhost', origin: 'http://localhost:8080' });
  });
});

describe(`the passkey service on ${testDialect()}`, { timeout: 120_000 }, () => {
  let t: TestApp;
  let store: ReturnType<typeof openStore>;
  let clock = Date.now();
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: ORIGIN });
    store = openStore(t.config.database);
    await createAccountService(store).add({ ...ANN, displayName: 'Ann' });
  });
  afterAll(async () => {
    await store?.db.destroy();
    await t?.close();
  });

  it('a challenge is good for CHALLENGE_TTL_MS only, on any instance, and the sweep removes it after; the counter and last use are kept on both stores', async () => {
    const accounts = createAccountService(store);
    const passkeys = createPasskeyService(store, accounts, ORIGIN, () => clock);
    const ann = (await accounts.find(ANN.email))!;
    const authenticator = new SoftAuthenticator(ORIGIN);

    const late = await passkeys.registrationOptions(ann);
    clock += CHALLENGE_TTL_MS + 1;
    await expect(passkeys.register(ann, authenticator.register(late), 'late')).rejects.toThrow(/expired or was not made here/);
    expect(await sweepPasskeyChallenges(store, clock)).toBe(1);
    expect(await store.db.selectFrom('passkey_challenges').selectAll().execute()).toEqual([]);

    // Asked of one instance, answered to another: the challenge is in the database, not in memory.
    const other = openStore(t.config.database);
    try {
      const onTime = await passkeys.registrationOptions(ann);
      clock += CHALLENGE_TTL_MS - 1000;
      await createPasskeyService(other, createAccountService(other), ORIGIN, () => clock).register(ann, authenticator.register(onTime), 'on time');
    } finally {
      await other.db.destroy();
    }
    expect(await sweepPasskeyChallenges(store, clock)).toBe(0);

    for (let i = 0; i < 2; i++) {
      const account = await passkeys.authenticate('interaction-1', authenticator.authenticate(await passkeys.authenticationOptions('interaction-1')));
      expect(account.userId).toBe(ann.userId);
    }
    const [row] = await store.db.selectFrom('passkeys').selectAll().execute();
    expect(Number(row!.counter)).toBe(2);
    expect(row!.last_used_at).toBe(new Date(clock).toISOString());
    expect(JSON.parse(row!.transports)).toEqual(['internal']);

    // A disabled account's passkey signs in no more.
    await accounts.setDisabled(ANN.email, true);
    await expect(passkeys.authenticate('interaction-1', authenticator.authenticate(await passkeys.authenticationOptions('interaction-1')))).rejects.toThrow(/not registered/);
  });
});
