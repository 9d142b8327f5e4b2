import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { freePort } from '../support/free-port.js';
import { runCli, startServer, type ServerProcess } from '../support/processes.js';
import { CHROMIUM, haveBrowser } from '../support/pages-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * The edges of the sign-in pages (issue 33) in a real browser against a real `cardshelf serve`
 * (dist/: `npm run build` first): a device flow in a registered app's name is marked as not
 * verified, and a code form sent without its cookie is a 400 page. Skipped without the browser,
 * except on CI, as test/browser/sign-in-browser.test.ts.
 */
describe.skipIf(!haveBrowser)(`the sign-in pages' edges in Chromium on ${testDialect()}`, { timeout: 180_000 }, () => {
  let deployment: Deployment;
  let server: ServerProcess;
  let browser: Browser;
  beforeAll(async () => {
    deployment = await createDeployment();
    const added = runCli(['client', 'add', 'myapp', '--name', 'My App', '--redirect-uri', 'https://myapp.example/callback'], deployment.env);
    expect((await added.exited).code, added.stderr()).toBe(0);
    const port = await freePort();
    server = await startServer({ ...deployment.env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
  });

  const startDevice = async (clientId: string): Promise<{ user_code: string; verification_uri: string }> => {
    const started = await fetch(`${server.url}/oauth/device/code`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: clientId, scope: 'openid profile offline_access' }).toString(),
    });
    expect(started.status).toBe(200);
    return (await started.json()) as { user_code: string; verification_uri: string };
  };

  it('a device flow as the registered app `myapp`: the page names My App and says Cardshelf has not verified it', async () => {
    const device = await startDevice('myapp');
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(device.verification_uri);
    await page.getByLabel('Code').fill(device.user_code);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Is this your device?').waitFor();
    const text = await page.locator('main').innerText();
    expect(text).toContain('My App (myapp)');
    expect(text).toContain('Cardshelf has not verified this app');
    await context.close();
  });

  it('a code sent from a page whose cookie is gone: a 400 page that says the page has expired', async () => {
    const device = await startDevice('yoto-nodejs-client');
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(device.verification_uri);
    await context.clearCookies();
    await page.getByLabel('Code').fill(device.user_code);
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Continue' }).click()]);
    expect(answer.status()).toBe(400);
    await page.getByRole('heading', { name: 'This page has expired' }).waitFor();
    await context.close();
  });
});
