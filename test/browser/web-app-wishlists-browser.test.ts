import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { familyOf } from '../support/fixtures.js';
import { freePort } from '../support/free-port.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { coverUrl } from '../support/linked-remote.js';
import { CHROMIUM, expectAccessible, expectBuildCurrent, haveBrowser } from '../support/pages-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * Wishlists in the app (issue 35, row 7), in Chromium against the built app: a wishlist named and
 * built by title from a combobox by keyboard (type, arrow, Enter), its items shown by title and
 * cover, renamed; an item whose card cannot be read says so; no id anywhere on the page. The
 * share link, opened signed out by a second member, says what was sent, and after sign-in shows
 * the wishlist under its owner's name. axe and no sideways scrolling at 375 and 1280 px.
 */
const OWNER = { name: 'Sam', email: 'sam.wishes@example.com', password: 'a long enough password' };
const SECOND = { name: 'Robin', email: 'robin.wishes@example.com', password: 'a long enough password' };

describe.skipIf(!haveBrowser)(`wishlists in Chromium on ${testDialect()}`, { timeout: 240_000 }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let owner = '';
  let second = '';
  let bedtime = '';
  let farm = '';
  let shareId = '';
  const problems: string[] = [];

  function watch(p: Page): Page {
    p.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    return p;
  }

  async function signIn(p: Page, who: { email: string; password: string }): Promise<void> {
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByLabel('Email').fill(who.email);
    await p.getByLabel('Password').fill(who.password);
    await p.getByRole('button', { name: 'Sign in' }).click();
    const approve = p.getByRole('button', { name: 'Approve' });
    await Promise.race([approve.waitFor(), p.waitForURL(/\/app\//)]);
    if (await approve.isVisible().catch(() => false)) await approve.click();
    await p.waitForURL(/\/app\//);
    await p.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  /** No card, user or wishlist id in what the page shows, nor in its accessible names. */
  async function expectNoIds(p: Page, extra: string[] = []): Promise<void> {
    const ids = [owner, second, bedtime, farm, ...extra];
    const shown = await p.locator('body').innerText();
    const labels = (await p.locator('[aria-label], img[alt]').evaluateAll((els) => els.map((e) => `${e.getAttribute('aria-label') ?? ''} ${e.getAttribute('alt') ?? ''}`))).join('\n');
    for (const id of ids) {
      expect(shown, `the page shows ${id}`).not.toContain(id);
      expect(labels, `a label names ${id}`).not.toContain(id);
    }
  }

  async function bothWidths(p: Page, what: string): Promise<void> {
    for (const width of [375, 1280]) {
      await p.setViewportSize({ width, height: 800 });
      await expectAccessible(p, `${what} at ${width} px`);
    }
  }

  beforeAll(async () => {
    await expectBuildCurrent();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({ PUBLIC_BASE_URL: base }, { dialect: testDialect() });
    await t.app.listen({ port, host: '127.0.0.1' });
    const store = openStore(t.config.database);
    try {
      const accounts = createAccountService(store);
      owner = (await accounts.add({ email: OWNER.email, displayName: OWNER.name, password: OWNER.password })).userId;
      second = (await accounts.add({ email: SECOND.email, displayName: SECOND.name, password: SECOND.password })).userId;
    } finally {
      await store.db.destroy();
    }
    await familyOf(t, [owner, second]);
    const token = await t.token(owner);
    const content = { chapters: [{ key: '01', title: 'One', tracks: [{ key: '01', title: 'One', trackUrl: 'https://example.com/a.mp3', type: 'audio', format: 'mp3' }] }] };
    const made = async (title: string, metadata: Record<string, unknown>): Promise<string> => {
      const r = await t.call('POST', '/content', { token, body: { title, content, metadata } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return (r.body as { card: { cardId: string } }).card.cardId;
    };
    bedtime = await made('Bedtime stories', { cover: { imageL: await coverUrl(t, token) } });
    farm = await made('Farm animal sounds', {});
    for (const cardId of [bedtime, farm]) expect((await t.call('POST', '/card/family/library', { token, body: { cardId } })).status).toBeLessThan(300);

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = watch(await (await browser.newContext()).newPage());
    await page.goto(`${base}/app/wishlists`);
    await signIn(page, OWNER);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('a wishlist is named and built by title by keyboard; its items show by title and cover; no id shows', async () => {
    await page.goto(`${base}/app/wishlists`);
    await page.getByLabel('Name of the new wishlist (optional)').fill('Birthday');
    await page.getByRole('button', { name: 'New wishlist' }).click();
    await page.getByRole('heading', { name: /^Birthday \(/ }).waitFor();

    const box = page.getByRole('combobox', { name: 'Add a card' });
    await box.focus();
    await page.keyboard.type('o'); // both titles have an "o": Bedtime stories first, then Farm animal sounds
    await page.getByRole('listbox').waitFor();
    expect(await page.getByRole('option').locator('.option-title').allInnerTexts()).toEqual(['Bedtime stories', 'Farm animal sounds']);
    await expectAccessible(page, 'the card picker open');
    await page.keyboard.press('ArrowDown');
    const active = await box.getAttribute('aria-activedescendant');
    expect(await page.locator(`[id="${active}"] .option-title`).innerText()).toBe('Farm animal sounds');
    expect(await page.getByRole('option', { name: 'Farm animal sounds' }).getAttribute('aria-selected')).toBe('true');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await box.focus();
    await page.keyboard.type('bedt');
    expect(await page.getByRole('option').locator('.option-title').allInnerTexts()).toEqual(['Bedtime stories']);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Remove Bedtime stories' }).waitFor();

    const items = page.locator('.wish-items li');
    expect(await items.locator('.item-title').allInnerTexts()).toEqual(['Farm animal sounds', 'Bedtime stories']);
    // The chosen cover for one, the generated one for the card without.
    expect(await items.nth(1).getByRole('img', { name: /Bedtime stories/ }).count()).toBe(1);
    expect(await items.nth(0).getByTestId('generated-cover').count()).toBe(1);

    await page.getByLabel('Name', { exact: true }).fill('Birthday presents');
    await page.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('heading', { name: /^Birthday presents \(/ }).waitFor();

    const mine = (await (await fetch(`${base}/wishlists?format=raw`, { headers: { authorization: `Bearer ${await t.token(owner)}` } })).json()) as { wishlists: { name?: string; shareId: string; wishlistId: string; content: { item: string }[] }[] };
    expect(mine.wishlists).toHaveLength(1);
    expect(mine.wishlists[0]).toMatchObject({ name: 'Birthday presents', content: [{ item: farm }, { item: bedtime }] });
    shareId = mine.wishlists[0]!.shareId;
    await expectNoIds(page, [mine.wishlists[0]!.wishlistId]);
    await bothWidths(page, 'wishlists');
  });

  it('an item whose card cannot be read shows as no longer available, not by its id', async () => {
    const r = await t.call('POST', '/wishlists', { token: await t.token(owner), body: { name: 'Old one', content: [{ item: 'gone1' }] } });
    expect(r.status).toBe(201);
    await page.goto(`${base}/app/wishlists`);
    await page.getByRole('heading', { name: /^Old one \(/ }).waitFor();
    await page.getByText('A card no longer available').waitFor();
    await expectNoIds(page, ['gone1']);
  });

  it("a signed-out member opening the link is told what was sent; after signing in, the wishlist shows under its owner's name", async () => {
    const context = await browser.newContext();
    try {
      const other = watch(await context.newPage());
      await other.goto(`${base}/app/shared/${shareId}`);
      await other.getByText('Someone shared a wishlist with you. Sign in to see it.').waitFor();
      await bothWidths(other, 'the shared link signed out');
      await signIn(other, SECOND);
      expect(new URL(other.url()).pathname).toBe(`/app/shared/${shareId}`);
      await other.getByRole('heading', { name: 'Sam’s wishlist', level: 1 }).waitFor();
      await other.getByRole('heading', { name: 'Birthday presents', level: 2 }).waitFor();
      await other.getByText('Bedtime stories').waitFor();
      expect(await other.locator('.wish-items .item-title').allInnerTexts()).toEqual(['Farm animal sounds', 'Bedtime stories']);
      await expectNoIds(other);
      await bothWidths(other, 'the shared wishlist');
    } finally {
      await context.close();
    }
    expect(problems).toEqual([]);
  });
});
