import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { TestApp } from '../support/test-app.js';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { Browser, field, formAction, tokenRequest, type Answer } from '../support/oauth-browser.js';
import { cli } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

const EMAIL = 'ann@example.com';
const PASSWORD = 'correct horse battery';
const CLIENT = 'family-web';
const REDIRECT = 'https://cards.example/callback';

/**
 * `cardshelf client add|list|remove`, and what a registered app may do over HTTP that an
 * unregistered one may not: be sent back to its https address, named without the warning.
 */
describe(`registered apps on ${testDialect()}`, { timeout: 180_000 }, () => {
  let deployment: Deployment;
  let t: TestApp;
  beforeAll(async () => {
    deployment = await createDeployment();
    // The app runs on the deployment's database, as a server started beside the CLI would.
    const app = await buildApp(loadConfig({ ...deployment.env, LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'http://localhost' }));
    await app.ready();
    t = { app } as TestApp;
    await createAccountService(deployment.store()).add({ email: EMAIL, displayName: 'Ann', password: PASSWORD });
  });
  afterAll(async () => {
    await t?.app.close();
    await deployment?.close();
  });

  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');

  /** Starts a sign-in of `clientId` to `redirectUri`; answers the first page it lands on. */
  async function authorize(browser: Browser, clientId: string, redirectUri: string): Promise<Answer> {
    const query = new URLSearchParams({ client_id: clientId, response_type: 'code', redirect_uri: redirectUri, scope: 'openid offline_access', code_challenge: challenge, code_challenge_method: 'S256' });
    return browser.follow(await browser.request('GET', `/authorize?${query}`));
  }

  async function signInAndApprove(browser: Browser, page: Answer): Promise<Answer> {
    const signedIn = await browser.follow(await browser.request('POST', formAction(page.text), { csrf: field(page.text, 'csrf'), email: EMAIL, password: PASSWORD }));
    expect(signedIn.text).toContain('Approve this app?');
    return browser.follow(await browser.request('POST', formAction(signedIn.text), { csrf: field(signedIn.text, 'csrf'), decision: 'approve' }));
  }

  it('the CLI refuses what the engine would refuse, with exit 2 and nothing stored', async () => {
    const cases = [
      [['client', 'add', 'bad id!', '--name', 'X', '--redirect-uri', REDIRECT], 'client id'],
      [['client', 'add', 'plain-http', '--name', 'X', '--redirect-uri', 'http://cards.example/callback'], 'https://'],
      [['client', 'add', 'fragment', '--name', 'X', '--redirect-uri', 'https://cards.example/cb#x'], 'fragment'],
      [['client', 'add', 'no-uri', '--name', 'X'], '--redirect-uri'],
      // An ID token's `aud` is its client id: no app may be named as the API's audience (LOCAL_AUDIENCE).
      [['client', 'add', 'cardshelf', '--name', 'X', '--redirect-uri', REDIRECT], 'an audience of this API'],
    ] as const;
    // Each refused before it stores anything: side by side, as test/cli.test.ts runs its refusals.
    const results = await Promise.all(cases.map(([args]) => cli([...args], deployment.env)));
    for (const [i, [, message]] of cases.entries()) {
      const refused = results[i]!;
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(message);
    }
    expect((await cli(['client', 'list'], deployment.env)).stdout).toBe('');
  });

  it('a registered app is sent back to its https address and named as verified; other addresses refused; removed, its sign-ins end', async () => {
    const added = await cli(['client', 'add', CLIENT, '--name', 'Family web', '--redirect-uri', REDIRECT, '--redirect-uri', 'http://127.0.0.1/callback'], deployment.env);
    expect(added.code, added.stderr).toBe(0);
    const twice = await cli(['client', 'add', CLIENT, '--name', 'Again', '--redirect-uri', REDIRECT], deployment.env);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('registered already');
    const listed = await cli(['client', 'list'], deployment.env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toBe(`${CLIENT}\tFamily web\t${REDIRECT} http://127.0.0.1/callback\n`);

    const browser = new Browser(t);
    const page = await authorize(browser, CLIENT, REDIRECT);
    expect(page.text).toContain('Family web');
    expect(page.text).not.toContain('Cardshelf has not verified this app');
    const approved = await signInAndApprove(browser, page);
    expect(approved.status).toBe(303);
    expect(approved.location).toMatch(/^https:\/\/cards\.example\/callback\?code=/);
    const code = new URL(approved.location!).searchParams.get('code')!;
    const tokens = await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: CLIENT, code_verifier: verifier });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/user/family', headers: { authorization: `Bearer ${tokens.body.access_token}` } })).statusCode).toBe(200);

    // Its loopback redirect on any port (RFC 8252), but no https address it did not register.
    expect((await authorize(new Browser(t), CLIENT, 'http://127.0.0.1:5173/callback')).text).toContain('Sign in');
    const other = await authorize(new Browser(t), CLIENT, 'https://cards.example/elsewhere');
    expect(other.status).toBe(400);
    expect(other.location).toBeUndefined();
    // Unregistered, an app may not be sent to an https address at all.
    expect((await authorize(new Browser(t), 'someone-else', REDIRECT)).status).toBe(400);

    const removed = await cli(['client', 'remove', CLIENT], deployment.env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: CLIENT })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // Its access tokens too, once the server read the revocation the command wrote (its poll).
    const familyStatus = async (): Promise<number> => (await t.app.inject({ method: 'GET', url: '/user/family', headers: { authorization: `Bearer ${tokens.body.access_token}` } })).statusCode;
    await expect.poll(familyStatus, { timeout: 5000, interval: 100 }).toBe(401);
    expect((await authorize(new Browser(t), CLIENT, REDIRECT)).status).toBe(400);
    expect((await cli(['client', 'remove', CLIENT], deployment.env)).code).toBe(2);
    expect((await cli(['client', 'list'], deployment.env)).stdout).toBe('');
  });
});
