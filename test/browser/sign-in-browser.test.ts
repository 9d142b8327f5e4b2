import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { freePort } from '../support/free-port.js';
import { runCli, startServer, type ServerProcess } from '../support/processes.js';
import { CHROMIUM, expectAccessible, expectLabelled, haveBrowser, tabTo } from '../support/pages-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * The sign-in pages in a real browser (Debian's `chromium`, driven by playwright-core), against
 * a real `cardshelf serve` seeded with the demo: what a newcomer does after the README's two
 * commands. Skipped without the browser, except on CI (CI=true), as test/browser/docs-browser.test.ts.
 */
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

describe.skipIf(!haveBrowser)(`signing in from Chromium on ${testDialect()}`, { timeout: 180_000 }, () => {
  let deployment: Deployment;
  let server: ServerProcess;
  let browser: Browser;
  let demo: { email: string; password: string };
  beforeAll(async () => {
    deployment = await createDeployment();
    const seeded = runCli(['seed', '--demo'], deployment.env);
    expect((await seeded.exited).code, seeded.stderr()).toBe(0);
    const [, email = '', password = ''] = /sign in as (\S+) with the password (\S+)/.exec(seeded.stderr()) ?? [];
    demo = { email, password };
    const port = await freePort();
    server = await startServer({ ...deployment.env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
  });

  it("device login: the code entered at /activate, the demo parent signs in and approves; the app lists the demo user's cards and refreshes; then invites a second parent who joins by the link", async () => {
    const started = await fetch(`${server.url}/oauth/device/code`, form({ client_id: 'yoto-nodejs-client', scope: 'openid profile offline_access', audience: 'https://api.yotoplay.com' }));
    expect(started.status).toBe(200);
    const device = (await started.json()) as { device_code: string; user_code: string; verification_uri: string };

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });

    await page.goto(device.verification_uri);
    await expectLabelled(page);
    await page.getByLabel('Code').fill(device.user_code);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Is this your device?').waitFor();
    expect(await page.content()).toContain('Cardshelf has not verified this app');
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectLabelled(page);
    await page.getByLabel('Email').fill(demo.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).toContain('do not match an account');
    await page.getByLabel('Password').fill(demo.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();

    await page.getByRole('heading', { name: 'Approve this app?' }).waitFor();
    expect(await page.content()).toContain('Demo Parent');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();

    const tokens = await fetch(`${server.url}/oauth/token`, form({ grant_type: DEVICE_GRANT, device_code: device.device_code, client_id: 'yoto-nodejs-client' }));
    const granted = (await tokens.json()) as { access_token: string; refresh_token: string };
    expect(tokens.status, JSON.stringify(granted)).toBe(200);
    const mine = await fetch(`${server.url}/content/mine`, { headers: { authorization: `Bearer ${granted.access_token}` } });
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as { cards: unknown[] }).cards.length).toBeGreaterThan(0);

    const refreshed = await fetch(`${server.url}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: granted.refresh_token, client_id: 'yoto-nodejs-client' }));
    const renewed = (await refreshed.json()) as { access_token: string; refresh_token: string };
    expect(refreshed.status, JSON.stringify(renewed)).toBe(200);
    expect(renewed.refresh_token).not.toBe(granted.refresh_token);

    // The demo parent invites a second parent, who joins by the link alone.
    type FamilyAnswer = { family: { familyId: string; members: { userId: string }[] } };
    const familyNow = async () =>
      ((await (await fetch(`${server.url}/user/family`, { headers: { authorization: `Bearer ${renewed.access_token}` } })).json()) as FamilyAnswer).family;
    const before = await familyNow();
    const invited = await fetch(`${server.url}/user/invitations`, { method: 'POST', headers: { authorization: `Bearer ${renewed.access_token}` } });
    expect(invited.status).toBe(201);
    const { invitation } = (await invited.json()) as { invitation: { url: string; familyId: string } };
    const joining = await browser.newPage();
    await joining.goto(invitation.url);
    await expectLabelled(joining);
    await joining.getByLabel('Your name').fill('Second Parent');
    await joining.getByLabel('Email').fill('second.parent@example.com');
    await joining.getByLabel('Password').fill('a long enough password');
    await joining.getByRole('button', { name: 'Make my account' }).click();
    await joining.waitForLoadState();
    expect(await joining.content()).toContain('If second.parent@example.com had no account here, it has one now');
    await joining.getByRole('heading', { name: 'Thank you' }).waitFor();

    const after = await familyNow();
    expect(after.familyId).toBe(invitation.familyId);
    expect(after.members).toHaveLength(before.members.length + 1);

    // The pages' own policy let them load and submit everything they need.
    expect(problems.filter((p) => /Content Security Policy|Refused to/i.test(p))).toEqual([]);
  });

  it('on a 375 px phone, by keyboard alone: every page (code, sign in, approve, invitation, account) has no WCAG A/AA violation; the account page signs the app out', async () => {
    const started = await fetch(`${server.url}/oauth/device/code`, form({ client_id: 'yoto-js-keyboard', scope: 'openid profile offline_access' }));
    const device = (await started.json()) as { device_code: string; user_code: string; verification_uri: string };
    const context = await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();

    await page.goto(device.verification_uri);
    await expectAccessible(page, '/activate');
    await tabTo(page, 'Code');
    await page.keyboard.type(device.user_code);
    await page.keyboard.press('Enter');
    await page.getByText('Is this your device?').waitFor();
    await expectAccessible(page, 'the code confirmation');
    await tabTo(page, 'Continue');
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectAccessible(page, 'sign in');
    await tabTo(page, 'Email');
    await page.keyboard.type(demo.email);
    await tabTo(page, 'Password');
    await page.keyboard.type('not the password');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').waitFor();
    await expectAccessible(page, 'sign in, with its error');
    await tabTo(page, 'Password');
    await page.keyboard.type(demo.password);
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: 'Approve this app?' }).waitFor();
    await expectAccessible(page, 'approve');
    await tabTo(page, 'Approve');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    await expectAccessible(page, 'device connected');

    const tokens = await fetch(`${server.url}/oauth/token`, form({ grant_type: DEVICE_GRANT, device_code: device.device_code, client_id: 'yoto-js-keyboard' }));
    const granted = (await tokens.json()) as { access_token: string; refresh_token: string };
    expect(tokens.status, JSON.stringify(granted)).toBe(200);

    const invited = await fetch(`${server.url}/user/invitations`, { method: 'POST', headers: { authorization: `Bearer ${granted.access_token}` } });
    const { invitation } = (await invited.json()) as { invitation: { url: string } };
    await page.goto(invitation.url);
    await expectAccessible(page, 'the invitation');

    // The account page: sign in by keyboard, see the app, sign it out.
    await page.goto(`${server.url}/account`);
    await expectAccessible(page, 'the account page sign-in');
    await tabTo(page, 'Email');
    await page.keyboard.type(demo.email);
    await tabTo(page, 'Password');
    await page.keyboard.type(demo.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Signed-in apps' }).waitFor();
    expect(await page.content()).toContain('<code>yoto-js-keyboard</code>');
    await expectAccessible(page, 'the account page');
    await tabTo(page, 'Sign out yoto-js-keyboard');
    await page.keyboard.press('Enter');
    await page.getByRole('status').waitFor();
    expect(await page.getByRole('status').innerText()).toContain('The app is signed out');
    await expectAccessible(page, 'the account page after signing an app out');
    const refused = await fetch(`${server.url}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: granted.refresh_token, client_id: 'yoto-js-keyboard' }));
    expect(refused.status).toBe(400);
    await context.close();
  });
  it('on a 375 px phone, by keyboard: "Not you? Sign out" on the approve page and "Sign out" on /account each end the sign-in, so the next device asks for the password', async () => {
    const context = await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    /** Enters a new device's code at /activate and confirms it, by keyboard; answers its device code. */
    const connect = async (clientId: string): Promise<string> => {
      const started = await fetch(`${server.url}/oauth/device/code`, form({ client_id: clientId, scope: 'openid profile offline_access' }));
      const device = (await started.json()) as { device_code: string; user_code: string; verification_uri: string };
      await page.goto(device.verification_uri);
      await tabTo(page, 'Code');
      await page.keyboard.type(device.user_code);
      await page.keyboard.press('Enter');
      await page.getByText('Is this your device?').waitFor();
      await tabTo(page, 'Continue');
      await page.keyboard.press('Enter');
      return device.device_code;
    };
    const signIn = async (): Promise<void> => {
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await tabTo(page, 'Email');
      await page.keyboard.type(demo.email);
      await tabTo(page, 'Password');
      await page.keyboard.type(demo.password);
      await page.keyboard.press('Enter');
    };

    await connect('yoto-sign-out-one');
    await signIn();
    await page.getByRole('heading', { name: 'Approve this app?' }).waitFor();
    expect(await page.getByText('Not Demo Parent?').count()).toBe(1);
    await expectAccessible(page, 'approve, with its sign-out link');
    await tabTo(page, 'Sign out');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sign out?' }).waitFor();
    await expectAccessible(page, 'the sign-out page');
    await tabTo(page, 'Sign out');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Signed out' }).waitFor();
    await expectAccessible(page, 'signed out');

    // Signed out: the next device asks for the password again, then approves.
    const second = await connect('yoto-sign-out-two');
    await signIn();
    await page.getByRole('heading', { name: 'Approve this app?' }).waitFor();
    await tabTo(page, 'Approve');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    const tokens = await fetch(`${server.url}/oauth/token`, form({ grant_type: DEVICE_GRANT, device_code: second, client_id: 'yoto-sign-out-two' }));
    expect(tokens.status).toBe(200);

    // The account page's "Sign out" ends the pages' sign-in too.
    await page.goto(`${server.url}/account`);
    await tabTo(page, 'Email');
    await page.keyboard.type(demo.email);
    await tabTo(page, 'Password');
    await page.keyboard.type(demo.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Signed-in apps' }).waitFor();
    await tabTo(page, 'Sign out');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await connect('yoto-sign-out-three');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Approve this app?' }).count()).toBe(0);
    await context.close();
  });
});
