import { generateKeyPairSync } from 'node:crypto';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { freePort } from '../support/free-port.js';
import { CHROMIUM, expectAccessible, expectLabelled, haveBrowser, tabTo } from '../support/pages-browser.js';
import { runCli, startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

/**
 * Passkeys in a real Chromium, with its virtual authenticator (over CDP: a platform
 * authenticator holding discoverable credentials, which verifies its user at once). The server's
 * public base URL is http://localhost:<port>: WebAuthn refuses an IP address as RP id.
 */
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

describe.skipIf(!haveBrowser)(`passkeys in Chromium on ${testDialect()}`, { timeout: 180_000 }, () => {
  let deployment: Deployment;
  let server: ServerProcess;
  let browser: Browser;
  let base: string;
  let demo: { email: string; password: string };
  beforeAll(async () => {
    deployment = await createDeployment();
    const seeded = runCli(['seed', '--demo'], deployment.env);
    expect((await seeded.exited).code, seeded.stderr()).toBe(0);
    const [, email = '', password = ''] = /sign in as (\S+) with the password (\S+)/.exec(seeded.stderr()) ?? [];
    demo = { email, password };
    const port = await freePort();
    base = `http://localhost:${port}`;
    server = await startServer({ ...deployment.env, PORT: String(port), PUBLIC_BASE_URL: base });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
  });

  it('on a 375 px phone, by keyboard alone: a passkey added on /account signs in to a device login without the password; the token works', async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });

    // Sign in to the account page with the password, once, to add the passkey.
    await page.goto(`${base}/account`);
    await tabTo(page, 'Email');
    await page.keyboard.type(demo.email);
    await tabTo(page, 'Password');
    await page.keyboard.type(demo.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    await page.getByRole('button', { name: 'Add a passkey' }).waitFor();
    expect(await page.getByText('You have no passkeys yet.').count()).toBe(1);
    await expectLabelled(page);
    await expectAccessible(page, 'the account page with its passkey form');

    await tabTo(page, 'Passkey name');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Phone in the kitchen');
    await tabTo(page, 'Add a passkey');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Your passkey was added' }).waitFor();
    expect(await page.getByText('Phone in the kitchen').count()).toBe(1);
    expect(await page.getByText('not used yet').count()).toBe(1);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    await expectAccessible(page, 'the account page listing a passkey');

    // The page left open for 6 minutes (its session's password aged in the database): changing
    // passkeys asks for the password again first, by keyboard too.
    const old = new Date(Date.now() - 6 * 60_000).toISOString();
    await deployment.store().db.updateTable('account_sessions').set({ confirmed_at: old }).execute();
    await page.reload();
    await page.getByText('To add or remove a passkey, enter your password again.').waitFor();
    expect(await page.getByRole('button', { name: 'Add a passkey' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Remove the passkey Phone in the kitchen' }).count()).toBe(0);
    await expectLabelled(page);
    await expectAccessible(page, 'the account page asking for the password again');
    await tabTo(page, 'Password');
    await page.keyboard.type(demo.password);
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'you can add or remove passkeys' }).waitFor();
    await page.getByRole('button', { name: 'Remove the passkey Phone in the kitchen' }).waitFor();
    await expectAccessible(page, 'the account page after the password again');

    await tabTo(page, 'Sign out');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();

    // A device login: the code at /activate, then the passkey alone.
    const started = await fetch(`${base}/oauth/device/code`, form({ client_id: 'yoto-passkey', scope: 'openid profile offline_access' }));
    expect(started.status).toBe(200);
    const device = (await started.json()) as { device_code: string; user_code: string; verification_uri: string };
    expect(device.verification_uri.startsWith(base)).toBe(true);
    await page.goto(device.verification_uri);
    await tabTo(page, 'Code');
    await page.keyboard.type(device.user_code);
    await page.keyboard.press('Enter');
    await page.getByText('Is this your device?').waitFor();
    await tabTo(page, 'Continue');
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    await expectLabelled(page);
    await expectAccessible(page, 'sign in, with a passkey offered');
    await tabTo(page, 'Sign in with a passkey');
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: 'Approve this app?' }).waitFor();
    expect(await page.content()).toContain('Demo Parent');
    await tabTo(page, 'Approve');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();

    const tokens = await fetch(`${base}/oauth/token`, form({ grant_type: DEVICE_GRANT, device_code: device.device_code, client_id: 'yoto-passkey' }));
    const granted = (await tokens.json()) as { access_token: string };
    expect(tokens.status, JSON.stringify(granted)).toBe(200);
    const mine = await fetch(`${base}/content/mine`, { headers: { authorization: `Bearer ${granted.access_token}` } });
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as { cards: unknown[] }).cards.length).toBeGreaterThan(0);

    // The pages' policy let them load and run their scripts.
    expect(problems.filter((p) => /Content Security Policy|Refused to/i.test(p))).toEqual([]);
    await context.close();
  });

  it('a passkey the server does not know is refused: the page says so in its live region, and the button stays usable', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    await cdp.send('WebAuthn.addCredential', {
      authenticatorId,
      credential: {
        credentialId: Buffer.from('not registered here').toString('base64'),
        isResidentCredential: true,
        rpId: 'localhost',
        privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
        userHandle: Buffer.from('nobody').toString('base64'),
        signCount: 0,
      },
    });
    const started = await fetch(`${base}/oauth/device/code`, form({ client_id: 'yoto-passkey', scope: 'openid offline_access' }));
    const device = (await started.json()) as { user_code: string; verification_uri: string };
    await page.goto(device.verification_uri);
    await page.getByLabel('Code').fill(device.user_code);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Is this your device?').waitFor();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByText('That did not work: this passkey is not registered with this Cardshelf').waitFor();
    expect(await page.getByRole('button', { name: 'Sign in with a passkey' }).isEnabled()).toBe(true);
    expect(await page.getByRole('heading', { name: 'Sign in', exact: true }).count()).toBe(1);
    await expectAccessible(page, 'sign in, after a refused passkey');
    await context.close();
  });
});
