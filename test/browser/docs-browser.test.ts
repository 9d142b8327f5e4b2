import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { runCli, startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

/**
 * /docs in a real browser: Debian's `chromium` (which .ci/run installs) driven by
 * playwright-core, no browser download. Without that browser the test is skipped, except on CI
 * (CI=true), where it fails rather than pass without having run.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(CHROMIUM) || process.env.CI === 'true';
const SCREENSHOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../.artifacts/docs-page.png');

describe.skipIf(!haveBrowser)(`the /docs page in Chromium on ${testDialect()}`, { timeout: 120_000 }, () => {
  let deployment: Deployment;
  let server: ServerProcess;
  let browser: Browser;
  beforeAll(async () => {
    deployment = await createDeployment();
    server = await startServer(deployment.env);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
  });

  it('lists every operation, authorises with a token from `cardshelf token`, and runs a request', async () => {
    const minted = runCli(['token', '--sub', 'auth0|docs-reader', '--scope', 'user:content:manage family:library:manage'], deployment.env);
    expect((await minted.exited).code, minted.stderr()).toBe(0);
    const token = minted.stdout().trim();
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, object> };
    const operations = Object.values(document.paths).flatMap((item) => Object.keys(item)).length;

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });
    await page.goto(`${server.url}/docs`);
    await page.locator('.opblock').first().waitFor();
    expect(await page.locator('.opblock').count()).toBe(operations);

    await page.locator('button.authorize').first().click();
    await page.locator('.modal-ux input[type="text"]').fill(token);
    await page.locator('.modal-ux button.modal-btn.auth.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();

    const op = page.locator('#operations-wishlists-getWishlists');
    await op.locator('.opblock-summary').click();
    await op.locator('button.try-out__btn').click();
    await op.locator('button.execute').click();
    const status = op.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    expect((await status.innerText()).trim()).toBe('200');
    expect(await op.locator('.live-responses-table .response-col_description pre').first().innerText()).toContain('"wishlists"');

    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    // The security headers' policy let the page load and run everything it needs.
    expect(problems.filter((p) => /Content Security Policy|Refused to/i.test(p))).toEqual([]);
  });
});
