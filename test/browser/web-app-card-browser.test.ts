import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { freePort } from '../support/free-port.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { audioRef, coverUrl } from '../support/linked-remote.js';
import { CHROMIUM, expectAccessible, expectBuildCurrent, haveBrowser } from '../support/pages-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * A card's own pages in Debian's Chromium (issue 35, rows 1 and 2): the card page plays a card
 * through, track after track, without a tap between them, and lists its tracks with the one
 * playing marked, under its cover; the editor, offline, says beside Save that the save failed,
 * keeps the edit, and saves it with Retry once back online. The built app is served
 * (`npm run build:web` first); the browser plays after the person's click on Play, as a real one.
 */
const ME = { email: 'parent@example.com', password: 'a long enough password' };
const TITLE = 'Two tones';

describe.skipIf(!haveBrowser)(`a card's pages in Chromium on ${testDialect()}`, { timeout: 240_000 }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let cardId = '';
  /** Uncaught errors of the page (the offline save threw "Failed to fetch"). */
  const thrown: string[] = [];

  // Read in the page (a string: the tests are compiled without the DOM's types).
  const audio = (): Promise<{ src: string; time: number; paused: boolean }> =>
    page.evaluate("(() => { const a = document.querySelector('audio'); return { src: a.currentSrc, time: a.currentTime, paused: a.paused }; })()");

  beforeAll(async () => {
    await expectBuildCurrent();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({ PUBLIC_BASE_URL: base }, { dialect: testDialect() });
    await t.app.listen({ port, host: '127.0.0.1' });
    const store = openStore(t.config.database);
    let userId: string;
    try {
      userId = (await createAccountService(store).add({ email: ME.email, displayName: 'Pat', password: ME.password })).userId;
    } finally {
      await store.db.destroy();
    }
    // One chapter of two real tracks, 3 s each: the first ends while the test watches.
    const token = await t.token(userId);
    const tracks = [];
    for (const [n, hz] of [[1, 440], [2, 660]] as const) {
      tracks.push({ key: `0${n}`, title: `Tone ${n}`, trackUrl: await audioRef(t, token, 3, hz), type: 'audio', format: 'aac' });
    }
    const content = { chapters: [{ key: '01', title: 'Both tones', tracks }] };
    const made = await t.call('POST', '/content', { token, body: { title: TITLE, content, metadata: { cover: { imageL: await coverUrl(t, token) } } } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    cardId = made.body.card.cardId as string;

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
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

  it('plays the card through: track 1, then track 2 without a tap, the list marking the track playing, under the cover', async () => {
    await page.goto(`${base}/app/play/${encodeURIComponent(cardId)}`);
    await page.getByRole('heading', { name: `Playing “${TITLE}”` }).waitFor();
    const cover = page.getByRole('img', { name: `Cover of ${TITLE}` });
    await cover.waitFor();
    await expect.poll(() => cover.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
    const marked = page.locator('.chapter-list [aria-current="true"]');
    expect(await marked.innerText()).toContain('1. Tone 1');

    await page.getByRole('button', { name: 'Play', exact: true }).click();
    const first = await audio();
    await expect.poll(async () => (await audio()).time, { timeout: 10_000 }).toBeGreaterThan(0.2);
    // Track 1 ends; track 2 loads and plays on its own.
    await expect.poll(async () => (await audio()).src, { timeout: 15_000, interval: 100 }).not.toBe(first.src);
    const second = (await audio()).src;
    await expect.poll(async () => (await audio()).time, { timeout: 10_000, interval: 100 }).toBeGreaterThan(0.5);
    const now = await audio();
    expect(now.src).toBe(second);
    expect(now.paused).toBe(false);
    expect(await marked.innerText()).toContain('2. Tone 2');
    expect(await marked.count()).toBe(1);
    await page.getByRole('status').filter({ hasText: 'Both tones: Tone 2' }).waitFor();
    // Paused before axe runs: its tracks are 3 s long, and axe on a busy machine takes as long.
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(async () => (await audio()).paused).toBe(true);
    expect((await audio()).src).toBe(second);
    await expectAccessible(page, 'card page, second track paused');
    expect(thrown).toEqual([]);
  });

  it('a save offline says so beside Save, keeps the edit, and Retry saves it once back online', async () => {
    await page.goto(`${base}/app/cards/${encodeURIComponent(cardId)}`);
    const title = page.getByLabel('Title', { exact: true });
    await expect.poll(() => title.inputValue()).toBe(TITLE);
    await context.setOffline(true);
    try {
      await title.fill('Two tones, renamed');
      await page.getByRole('button', { name: 'Save' }).click();
      const failed = page.getByRole('alert').filter({ hasText: 'Could not save: no connection to Cardshelf. Your changes are kept here; try again.' });
      await failed.waitFor();
      // Beside Save, where the parent looks: not above the form.
      const save = (await page.getByRole('button', { name: 'Save' }).boundingBox())!;
      const said = (await failed.boundingBox())!;
      expect(said.y - (save.y + save.height)).toBeLessThan(60);
      expect(said.y).toBeGreaterThanOrEqual(save.y);
      expect(await title.inputValue()).toBe('Two tones, renamed');
      await expectAccessible(page, 'editor, save failed offline');
      // A second try offline fails the same, and says so again.
      await page.getByRole('button', { name: 'Retry' }).click();
      await failed.waitFor();
    } finally {
      await context.setOffline(false);
    }
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.evaluate<string>('document.activeElement?.textContent ?? ""')).toBe('Save');
    await page.reload();
    await expect.poll(() => page.getByLabel('Title', { exact: true }).inputValue()).toBe('Two tones, renamed');
    expect(thrown).toEqual([]);
  });
});
