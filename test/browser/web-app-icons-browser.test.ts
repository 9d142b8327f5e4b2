import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { seedPublicIcons } from '../../src/modules/media/demo-icons.js';
import { freePort } from '../support/free-port.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { CHROMIUM, expectAccessible, expectBuildCurrent, haveBrowser } from '../support/pages-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * The editor's icon picker in Debian's Chromium (issue 35, row 8): searched and used by the
 * keyboard alone, the icon it picks saved on the card; icons suggested by a chapter's title; one's
 * own icons by their names; axe clean with the picker open, at 1280 and 375 px. The public
 * library is seeded as `cardshelf seed --demo` seeds it. The built app is served
 * (`npm run build:web` first).
 */
const ME = { email: 'icons@example.com', password: 'a long enough password' };
const ARTIFACTS = path.resolve(import.meta.dirname, '..', '.artifacts');
const CHAPTER = 'Wheels on the Bus';
const ref = (hash: string): string => `yoto:#${hash}`;
const TRACK = ref('a'.repeat(64));

describe.skipIf(!haveBrowser)(`the icon picker in Chromium on ${testDialect()}`, { timeout: 240_000 }, () => {
  let t: TestApp;
  let base: string;
  let token: string;
  let browser: Browser;
  let page: Page;
  let cardId = '';
  let files = '';
  const thrown: string[] = [];

  const publicIcon = async (title: string): Promise<{ mediaId: string }> => {
    const list = (await t.call('GET', '/media/displayIcons/user/yoto', { token })).body.displayIcons as { title: string; mediaId: string }[];
    return list.find((i) => i.title === title)!;
  };
  const storedChapter = async (): Promise<{ title: string; display?: { icon16x16?: string | null } }> =>
    (await t.call('GET', `/content/${cardId}`, { token })).body.card.content.chapters[0];
  const openEditor = async (): Promise<void> => {
    await page.goto(`${base}/app/cards/${encodeURIComponent(cardId)}`);
    await expect.poll(() => page.getByLabel('Title', { exact: true }).inputValue()).toBe('Icons');
  };
  const picker = (current: string) => page.getByRole('button', { name: `Icon for ${CHAPTER}: ${current}` });

  beforeAll(async () => {
    await expectBuildCurrent();
    await mkdir(ARTIFACTS, { recursive: true });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({ PUBLIC_BASE_URL: base }, { dialect: testDialect() });
    await t.app.listen({ port, host: '127.0.0.1' });
    const store = openStore(t.config.database);
    let userId: string;
    try {
      userId = (await createAccountService(store).add({ email: ME.email, displayName: 'Pat', password: ME.password })).userId;
      await seedPublicIcons(store, t.config);
    } finally {
      await store.db.destroy();
    }
    token = await t.token(userId);
    const content = { chapters: [{ key: '01', title: CHAPTER, tracks: [{ key: '01', title: 'The whole song', trackUrl: TRACK, type: 'audio', format: 'aac' }] }] };
    const made = await t.call('POST', '/content', { token, body: { title: 'Icons', content } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    cardId = made.body.card.cardId as string;
    files = await mkdtemp(path.join(tmpdir(), 'cardshelf-icons-'));
    await sharp({ create: { width: 48, height: 48, channels: 4, background: '#c60' } }).png().toFile(path.join(files, 'Grandma Rose.png'));

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
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
  // A failed test leaves a screenshot and says what the page shows.
  afterEach(async ({ task }) => {
    if (task.result?.state !== 'fail' || !page) return;
    await page.screenshot({ path: path.join(ARTIFACTS, `icon-picker-failed-${task.id}.png`), fullPage: true }).catch(() => undefined);
    process.stderr.write(`--- ${task.name}: the page shows\n${await page.locator('main').innerText({ timeout: 2_000 }).catch(() => '(unreadable)')}\n`);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (files) await rm(files, { recursive: true, force: true });
  });

  it('is searched and used by the keyboard alone, and the card saves the icon picked', async () => {
    await openEditor();
    await picker('No icon').focus();
    await page.keyboard.press('Enter');
    const search = page.getByRole('combobox', { name: 'Search icons' });
    await expect.poll(() => search.evaluate((el) => el === (el.ownerDocument as { activeElement: unknown }).activeElement)).toBe(true);
    // Escape closes and gives the focus back to the button.
    await page.keyboard.press('Escape');
    expect(await search.count()).toBe(0);
    await expect.poll(() => picker('No icon').evaluate((el) => el === (el.ownerDocument as { activeElement: unknown }).activeElement)).toBe(true);

    await page.keyboard.press('Enter');
    await page.keyboard.type('moon');
    await page.getByRole('status').filter({ hasText: /^\d+ icons?$/ }).waitFor();
    const found = page.getByRole('listbox').getByRole('option');
    expect(await found.evaluateAll((options) => options.map((o) => (o as unknown as { textContent: string; querySelector(s: string): { alt: string } | null }).querySelector('img')?.alt))).toContain('Moon');
    // Down reaches the first icon found, Right the next, Left back: the one Enter picks is the active one.
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowLeft');
    const active = await search.getAttribute('aria-activedescendant');
    expect(await page.locator(`[id="${active}"] img`).getAttribute('alt')).toBe('Moon');
    await page.keyboard.press('Enter');
    await expect.poll(() => picker('Moon').evaluate((el) => el === (el.ownerDocument as { activeElement: unknown }).activeElement)).toBe(true);
    expect(await search.count()).toBe(0);

    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const moon = await publicIcon('Moon');
    expect((await storedChapter()).display?.icon16x16).toBe(ref(moon.mediaId));
    // Read back, the editor shows it as picked.
    await openEditor();
    await picker('Moon').waitFor();
    expect(thrown).toEqual([]);
  });

  it("offers the icons a chapter's title suggests first", async () => {
    await openEditor();
    await picker('Moon').click();
    const suggested = page.getByRole('group', { name: `Suggested for “${CHAPTER}”` });
    await suggested.getByRole('option', { name: 'Bus' }).waitFor();
    // First in the list, after "No icon".
    const names = await page.getByRole('listbox').getByRole('option').evaluateAll((options) => options.slice(0, 2).map((o) => (o as unknown as { querySelector(s: string): { alt: string } | null; textContent: string }).querySelector('img')?.alt ?? o.textContent));
    expect(names).toEqual(['No icon', 'Bus']);
    await page.keyboard.press('Escape');
  });

  it('lists an icon uploaded from the editor by its name, never its hash', async () => {
    await openEditor();
    await page.locator('#icon-upload').setInputFiles(path.join(files, 'Grandma Rose.png'));
    await page.getByRole('status').filter({ hasText: 'Icon added' }).waitFor();
    await picker('Moon').click();
    const own = page.getByRole('group', { name: 'Your icons' });
    await own.getByRole('option', { name: 'Grandma Rose' }).waitFor();
    const names = await page.getByRole('listbox').getByRole('option').evaluateAll((options) => options.map((o) => (o as unknown as { querySelector(s: string): { alt: string } | null; textContent: string }).querySelector('img')?.alt ?? o.textContent));
    expect(names.filter((n) => /^[0-9a-f]{8,}$/.test(n))).toEqual([]);
    // Found by its name too, and picked with the keyboard.
    await page.keyboard.type('grandma');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await picker('Grandma Rose').waitFor();
  });

  it.each([
    [1280, 900],
    [375, 800],
  ])('is accessible (axe, no sideways scrolling) open at %i px', async (width, height) => {
    await page.setViewportSize({ width, height });
    try {
      await openEditor();
      await page.getByRole('button', { name: /^Icon for Wheels on the Bus: / }).click();
      await page.getByRole('combobox', { name: 'Search icons' }).waitFor();
      await page.getByRole('group', { name: 'Public icons' }).getByRole('option').first().waitFor();
      await page.keyboard.press('ArrowDown');
      await expectAccessible(page, `icon picker open at ${width} px`);
      await page.screenshot({ path: path.join(ARTIFACTS, `icon-picker-${width}.png`) });
      // The suggestions of an empty search, then a search that finds nothing.
      await page.keyboard.type('zzzz');
      await page.getByRole('status').filter({ hasText: 'No icon matches “zzzz”.' }).waitFor();
      await expectAccessible(page, `icon picker, nothing found, at ${width} px`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });
});
