import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { freePort } from '../support/free-port.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { CHROMIUM, expectAccessible, expectBuildCurrent, haveBrowser } from '../support/pages-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * A tablet made a player, in Debian's Chromium (issue 35, row 13): player mode shows the player
 * alone (no menu, no "Sign out"), with a Full screen button; the menu opens only when its corner
 * control is held (a mouse button or Enter/Space, 1.5 s), not on a short press; the app is
 * installable (a manifest with its icons) and its service worker keeps the shell, so a reload
 * without network opens the page and says it is offline. The built app is served
 * (`npm run build:web` first).
 */
const ME = { email: 'parent@example.com', password: 'a long enough password' };
/** Longer than the hold (1.5 s), with room for a busy machine; a short press is well below it. */
const HELD_MS = 2_000;
const SHORT_MS = 300;

describe.skipIf(!haveBrowser)(`player mode in Chromium on ${testDialect()}`, { timeout: 240_000 }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const thrown: string[] = [];

  const nav = () => page.getByRole('navigation', { name: 'Main' });
  const signOut = () => page.getByRole('button', { name: 'Sign out' });
  const hold = () => page.getByRole('button', { name: 'Parent menu' });
  async function expectMenuHidden(): Promise<void> {
    expect(await nav().isVisible()).toBe(false);
    expect(await signOut().isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Stop being a player' }).isVisible()).toBe(false);
  }
  async function expectMenuShown(): Promise<void> {
    await nav().waitFor({ timeout: 2_000 });
    expect(await nav().getByRole('link', { name: 'Family library' }).isVisible()).toBe(true);
    expect(await signOut().isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Stop being a player' }).isVisible()).toBe(true);
  }
  async function closeMenu(): Promise<void> {
    await page.getByRole('button', { name: 'Close the menu' }).click();
    await hold().waitFor();
    await expectMenuHidden();
  }
  /** The mouse pressed on the corner control for `ms`, then let go. */
  async function pressWithMouse(ms: number): Promise<void> {
    const box = (await hold().boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.waitForTimeout(ms);
    await page.mouse.up();
  }
  /** `key` held down on the focused corner control for `ms`. */
  async function pressWithKey(key: string, ms: number): Promise<void> {
    await hold().focus();
    await page.keyboard.down(key);
    await page.waitForTimeout(ms);
    await page.keyboard.up(key);
  }

  beforeAll(async () => {
    await expectBuildCurrent();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({ PUBLIC_BASE_URL: base }, { dialect: testDialect() });
    await t.app.listen({ port, host: '127.0.0.1' });
    const store = openStore(t.config.database);
    try {
      await createAccountService(store).add({ email: ME.email, displayName: 'Pat', password: ME.password });
    } finally {
      await store.db.destroy();
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (err) => thrown.push(err.message));
    // A policy's refusal (the service worker, the manifest, an icon) is a console error.
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !/net::ERR_INTERNET_DISCONNECTED/.test(msg.text())) thrown.push(`console: ${msg.text()}`);
    });
    await page.goto(`${base}/app/be-player`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Email').fill(ME.email);
    await page.getByLabel('Password').fill(ME.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const approve = page.getByRole('button', { name: 'Approve' });
    await Promise.race([approve.waitFor(), page.waitForURL(/\/app\//)]);
    if (await approve.isVisible().catch(() => false)) await approve.click();
    await page.getByRole('heading', { name: 'Make this browser a player' }).waitFor();
    // Not yet a player: the app's own menu is there.
    expect(await signOut().isVisible()).toBe(true);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('once the browser is a player, the page is in player mode at once: no menu, no Sign out, a Full screen button', async () => {
    await page.getByLabel('Player name').fill('Tablet');
    await page.getByRole('button', { name: 'Make it a player' }).click();
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    await expectMenuHidden();
    // The control's name, and its description saying how to use it.
    const describedBy = (await hold().getAttribute('aria-describedby'))!;
    expect(await page.locator(`[id="${describedBy}"]`).textContent()).toMatch(/press and hold .*hold Enter or Space/i);
    await page.getByRole('button', { name: 'Full screen' }).click();
    await expect.poll(() => page.evaluate<boolean>('document.fullscreenElement !== null')).toBe(true);
    await page.evaluate('document.exitFullscreen()');
  });

  it('a click or a short press does not open the menu', async () => {
    await hold().click();
    await expectMenuHidden();
    await pressWithMouse(SHORT_MS);
    await page.waitForTimeout(HELD_MS);
    await expectMenuHidden();
    for (const key of ['Enter', ' ']) {
      await pressWithKey(key, SHORT_MS);
      await page.waitForTimeout(HELD_MS);
      await expectMenuHidden();
    }
  });

  it('the mouse held on the corner control opens the menu: the pages, Sign out, Stop being a player', async () => {
    const box = (await hold().boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    // While held, the control shows its progress over the hold's time.
    const progress = await page.evaluate<[string, string]>("(() => { const s = getComputedStyle(document.querySelector('.hold-button'), '::after'); return [s.animationName, s.animationDuration]; })()");
    expect(progress).toEqual(['hold-fill', '1.5s']);
    await page.waitForTimeout(HELD_MS);
    await page.mouse.up();
    await expectMenuShown();
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Parent menu');
    await closeMenu();
  });

  it.each([['Enter', 'Enter'], ['Space', ' ']])('%s held on the focused corner control opens the menu; Escape closes it', async (_name, key) => {
    await pressWithKey(key, HELD_MS);
    await expectMenuShown();
    await page.keyboard.press('Escape');
    await hold().waitFor();
    await expectMenuHidden();
  });

  it.each([375, 1280])('player mode passes axe at %i px, closed and open', async (width) => {
    await page.setViewportSize({ width, height: 900 });
    await expectAccessible(page, `player mode ${width}`);
    await pressWithMouse(HELD_MS);
    await expectMenuShown();
    await expectAccessible(page, `player mode, menu open, ${width}`);
    await closeMenu();
  });

  it('installable: the page links a manifest that parses, starts at the player, and its 192 and 512 px icons load', async () => {
    const manifestUrl = await page.evaluate<string>("document.querySelector('link[rel=manifest]').href");
    expect(new URL(manifestUrl).pathname).toBe('/app/manifest.webmanifest');
    // Fetched and parsed by the page, as a browser does, under its policy (manifest-src).
    const manifest = await page.evaluate<{ name: string; start_url: string; display: string; theme_color: string; background_color: string; icons: { src: string; sizes: string; type: string }[] }>(
      `fetch(${JSON.stringify(manifestUrl)}).then((r) => r.json())`,
    );
    expect(manifest.name).toBe('Cardshelf player');
    expect(manifest.display).toBe('fullscreen');
    expect(manifest.theme_color).toMatch(/^#[0-9a-f]{6}$/i);
    expect(manifest.background_color).toMatch(/^#[0-9a-f]{6}$/i);
    expect(new URL(manifest.start_url, manifestUrl).pathname).toBe('/app/be-player');
    // As the browser itself reads it for installing (under manifest-src): no errors.
    const cdp = await context.newCDPSession(page);
    const read = await cdp.send('Page.getAppManifest');
    expect(read.errors).toEqual([]);
    expect(read.url).toBe(manifestUrl);
    await cdp.detach();
    for (const size of [192, 512]) {
      const icon = manifest.icons.find((i) => i.sizes === `${size}x${size}` && i.type === 'image/png');
      expect(icon, `${size} px icon`).toBeDefined();
      const src = new URL(icon!.src, manifestUrl).href;
      // Loaded as an image in the page: its real size, under the page's policy (img-src).
      const natural = await page.evaluate<[number, number]>(
        `new Promise((resolve, reject) => { const img = new Image(); img.onload = () => resolve([img.naturalWidth, img.naturalHeight]); img.onerror = reject; img.src = ${JSON.stringify(src)}; })`,
      );
      expect(natural).toEqual([size, size]);
    }
  });

  it('with the service worker active, a reload without network opens the player from the kept shell and says it is offline', async () => {
    // Within 10 s, or the test says so rather than waiting for ever.
    const ready = "Promise.race([navigator.serviceWorker.ready, new Promise((resolve) => setTimeout(resolve, 10000))])";
    expect(await page.evaluate<string | undefined>(`${ready}.then((r) => r?.active?.state)`)).toBe('activated');
    expect(await page.evaluate<string | undefined>(`${ready}.then((r) => r?.scope)`)).toBe(`${base}/app/`);
    expect(await page.getByText('You are offline').isVisible()).toBe(false);
    await context.setOffline(true);
    try {
      const answer = await page.reload();
      expect(answer?.fromServiceWorker()).toBe(true);
      await page.getByText('You are offline. The app works again when the network is back.').waitFor();
      // The shell is the whole app: the player page itself, in player mode.
      await page.getByRole('heading', { name: 'Tablet' }).waitFor();
      await expectMenuHidden();
      await expectAccessible(page, 'player mode offline');
    } finally {
      await context.setOffline(false);
    }
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 30_000 });
    expect(await page.getByText('You are offline').isVisible()).toBe(false);
    expect(thrown).toEqual([]);
  });
});
