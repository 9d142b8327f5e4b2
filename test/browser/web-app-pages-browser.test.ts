import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { freePort } from '../support/free-port.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { audioRef, coverUrl } from '../support/linked-remote.js';
import { CHROMIUM, expectAccessible, expectBuildCurrent, haveBrowser } from '../support/pages-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * Every page of the web app (issue 35, "Look and feel" and "Tests") at a phone's 375 px and a
 * desktop's 1280 px, in the light and the dark theme (prefers-color-scheme, emulated): axe finds
 * no WCAG A/AA violation, nothing scrolls sideways, the dark theme is dark, and a screenshot of
 * each goes to test-artifacts/screenshots/<page>-<width>-<scheme>.png for people to look at. One
 * browser for the file; the built app is served (`npm run build:web` first). Last, the now-playing
 * bar: a card started on its page plays on across the app, shown and paused from the bar.
 */
const SCREENSHOTS = path.resolve(import.meta.dirname, '../..', 'test-artifacts', 'screenshots');
const ME = { email: 'designer@example.com', password: 'a long enough password' };
const WIDTHS = [375, 1280] as const;
const SCHEMES = ['light', 'dark'] as const;

describe.skipIf(!haveBrowser)(`every page of the web app, both widths, both themes, in Chromium on ${testDialect()}`, { timeout: 240_000 }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  /** Signed in; the app's tokens live in the tab's sessionStorage, so this one tab visits every page. */
  let page: Page;
  let covered = '';
  let plain = '';
  let shareId = '';
  const thrown: string[] = [];

  beforeAll(async () => {
    await expectBuildCurrent();
    await mkdir(SCREENSHOTS, { recursive: true });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({ PUBLIC_BASE_URL: base }, { dialect: testDialect() });
    await t.app.listen({ port, host: '127.0.0.1' });
    const store = openStore(t.config.database);
    let userId: string;
    try {
      userId = (await createAccountService(store).add({ email: ME.email, displayName: 'Sam', password: ME.password })).userId;
    } finally {
      await store.db.destroy();
    }
    const token = await t.token(userId);
    // One card with a cover and real audio; one without a cover (a generated one shows) in the category `sfx`.
    const track = { key: '01', title: 'Tone', trackUrl: await audioRef(t, token, 8, 440), type: 'audio', format: 'aac' };
    const content = { chapters: [{ key: '01', title: 'The tone', tracks: [track] }] };
    const made = await t.call('POST', '/content', { token, body: { title: 'Bedtime stories', content, metadata: { category: 'stories', cover: { imageL: await coverUrl(t, token) } } } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    covered = (made.body as { card: { cardId: string } }).card.cardId;
    const bare = await t.call('POST', '/content', { token, body: { title: 'Farm animal sounds', content, metadata: { category: 'sfx' } } });
    expect(bare.status, JSON.stringify(bare.body)).toBe(201);
    plain = (bare.body as { card: { cardId: string } }).card.cardId;
    for (const cardId of [covered, plain]) expect((await t.call('POST', '/card/family/library', { token, body: { cardId } })).status).toBeLessThan(300);
    const wishlist = await t.call('POST', '/wishlists', { token, body: { content: [{ item: covered }, { item: plain }] } });
    expect(wishlist.status, JSON.stringify(wishlist.body)).toBeLessThan(300);
    shareId = (wishlist.body as { shareId: string }).shareId;
    expect(shareId).toBeTruthy();

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    context = await browser.newContext();
    page = follow(await context.newPage());
    page.on('pageerror', (err) => thrown.push(err.message));
    await page.goto(`${base}/app/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Email').fill(ME.email);
    await page.getByLabel('Password').fill(ME.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const approve = page.getByRole('button', { name: 'Approve' });
    await Promise.race([approve.waitFor(), page.waitForURL(/\/app\//)]);
    if (await approve.isVisible().catch(() => false)) await approve.click();
    await page.waitForURL(/\/app\//);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Each page: where it is, and what shows once it has loaded what it shows. */
  const pages: [name: string, at: () => string, ready: (p: Page) => Locator][] = [
    ['cards', () => '/app/', (p) => p.getByRole('heading', { name: 'Farm animal sounds' })],
    ['editor', () => `/app/cards/${covered}`, (p) => p.getByLabel('Title of chapter 1')],
    ['player', () => `/app/play/${covered}`, (p) => p.getByRole('button', { name: 'Play', exact: true })],
    ['library', () => '/app/library', (p) => p.getByRole('heading', { name: 'Farm animal sounds' })],
    ['wishlists', () => '/app/wishlists', (p) => p.getByText('Farm animal sounds')],
    ['shared-wishlist', () => `/app/shared/${shareId}`, (p) => p.locator('main li')],
    ['family', () => '/app/family', (p) => p.getByRole('heading', { name: 'Members' })],
    ['links', () => '/app/links', (p) => p.getByRole('heading', { name: 'Linked services', level: 1 })],
    ['be-player', () => '/app/be-player', (p) => p.getByLabel('Player name')],
    ['not-found', () => '/app/no-such-page', (p) => p.getByRole('heading', { name: 'There is no such page.' })],
  ];

  /** Requests under way in each page, but the family's event stream, which stays open as long as the app does. */
  const open = new WeakMap<Page, Set<unknown>>();
  function follow(p: Page): Page {
    const under = new Set<unknown>();
    open.set(p, under);
    p.on('request', (r) => {
      if (new URL(r.url()).pathname !== '/user/family/events') under.add(r);
    });
    p.on('requestfinished', (r) => under.delete(r));
    p.on('requestfailed', (r) => under.delete(r));
    return p;
  }
  /** As `networkidle` (which the event stream never lets come): no request under way for 300 ms. */
  async function settled(p: Page): Promise<void> {
    const under = open.get(p)!;
    let quietSince = Date.now();
    while (Date.now() - quietSince < 300) {
      if (under.size > 0) quietSince = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Shows `at` in `p` at each width and theme: axe, no sideways scrolling, the theme applied, a screenshot. */
  async function everyWay(p: Page, name: string, at: string, ready: (p: Page) => Locator): Promise<void> {
    for (const width of WIDTHS) {
      for (const colorScheme of SCHEMES) {
        const what = `${name} at ${width} px, ${colorScheme}`;
        await p.setViewportSize({ width, height: 800 });
        await p.emulateMedia({ colorScheme });
        await p.goto(`${base}${at}`);
        await ready(p).first().waitFor();
        await settled(p);
        // Covers and icons drawn before the picture is taken (a string: compiled without the DOM's types).
        await p.waitForFunction('[...document.images].every((i) => i.complete)');
        await expectAccessible(p, what);
        // The page follows the theme: dark paper under light ink in dark, the reverse in light.
        const [paper, ink] = await p.evaluate<[number, number]>(`(() => {
          const lum = (c) => { const [r, g, b] = c.match(/\\d+/g).map(Number); return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; };
          const s = getComputedStyle(document.body);
          // The page's paper: the body's, or the root's where the body's is transparent.
          const paper = s.backgroundColor === 'rgba(0, 0, 0, 0)' ? getComputedStyle(document.documentElement).backgroundColor : s.backgroundColor;
          return [lum(paper), lum(s.color)];
        })()`);
        if (colorScheme === 'dark') expect(paper, what).toBeLessThan(ink);
        else expect(paper, what).toBeGreaterThan(ink);
        await p.screenshot({ path: path.join(SCREENSHOTS, `${name}-${width}-${colorScheme}.png`), fullPage: true });
      }
    }
  }

  it.each(pages)('%s', async (name, at, ready) => {
    await everyWay(page, name, at(), ready);
  });

  it('sign-in', async () => {
    // A new tab has no tokens (they live in the tab's sessionStorage): the app's sign-in page.
    const signedOut = follow(await context.newPage());
    try {
      await everyWay(signedOut, 'sign-in', '/app/', (p) => p.getByRole('button', { name: 'Sign in' }));
    } finally {
      await signedOut.close();
    }
  });

  it('a card without a cover shows a generated one (its initials), its category in words, and no page threw', async () => {
    await page.goto(`${base}/app/`);
    const row = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Farm animal sounds' }) });
    expect(await row.getByTestId('generated-cover').innerText()).toBe('FA');
    await row.getByText('Sound effects').waitFor();
    expect(await row.getByText('sfx', { exact: true }).count()).toBe(0);
    expect(await page.getByRole('img', { name: 'Cover of Bedtime stories' }).count()).toBe(1);
    expect(thrown).toEqual([]);
  });

  it('a card started on its page plays on in the library, where the now-playing bar shows it, pauses it, and leads back', async () => {
    // Read in the page (a string: the tests are compiled without the DOM's types).
    const audio = (): Promise<{ time: number; paused: boolean; count: number }> =>
      page.evaluate("(() => { const a = document.querySelector('audio'); return { time: a.currentTime, paused: a.paused, count: document.querySelectorAll('audio').length }; })()");
    await page.setViewportSize({ width: 375, height: 800 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${base}/app/play/${covered}`);
    const bar = page.getByRole('region', { name: 'Now playing' });
    await page.getByRole('button', { name: 'Play', exact: true }).click();
    await expect.poll(async () => (await audio()).time, { timeout: 10_000 }).toBeGreaterThan(0.3);
    // On the card's own page the page is the player: no bar.
    expect(await bar.count()).toBe(0);

    await page.getByRole('link', { name: 'Family library' }).click();
    await page.getByRole('heading', { name: 'Family library', level: 1 }).waitFor();
    await bar.waitFor();
    await bar.getByRole('link', { name: 'Bedtime stories' }).waitFor();
    const before = (await audio()).time;
    await expect.poll(async () => (await audio()).time, { timeout: 5_000 }).toBeGreaterThan(before + 0.3);
    expect(await audio()).toMatchObject({ paused: false, count: 1 });
    await expectAccessible(page, 'library with the now-playing bar, 375 px, dark');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'now-playing-375-dark.png'), fullPage: false });

    await bar.getByRole('button', { name: 'Pause “Bedtime stories”' }).click();
    await expect.poll(async () => (await audio()).paused).toBe(true);
    await bar.getByRole('button', { name: 'Play “Bedtime stories”' }).waitFor();
    const paused = (await audio()).time;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await audio()).time).toBe(paused);

    await bar.getByRole('link', { name: 'Bedtime stories' }).click();
    await page.waitForURL(`${base}/app/play/${covered}`);
    await page.getByRole('button', { name: 'Play', exact: true }).waitFor();
    expect(await bar.count()).toBe(0);
    expect(thrown).toEqual([]);
  });
});
