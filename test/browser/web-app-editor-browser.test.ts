import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { freePort } from '../support/free-port.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { audioRef } from '../support/linked-remote.js';
import { CHROMIUM, expectAccessible, expectBuildCurrent, haveBrowser } from '../support/pages-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * The card editor in Debian's Chromium (issue 35, rows 3, 4 and 5): the title carries its limit
 * (it stops at 100 characters, a counter says so); a save the server refuses is said beside Save
 * in words and keeps the edits; a track is deleted, and comes back at its place with Undo; leaving
 * with unsaved edits asks (in the app and the browser's own question), and not once saved. Each
 * new state is checked with axe at 1280 and 375 px. The built app is served (`npm run build:web` first).
 */
const ME = { email: 'editor@example.com', password: 'a long enough password' };
const TITLE = 'Three bears';
const TRACKS = ['Papa', 'Mama', 'Baby'];

describe.skipIf(!haveBrowser)(`the card editor in Chromium on ${testDialect()}`, { timeout: 240_000 }, () => {
  let t: TestApp;
  let base: string;
  let token: string;
  let browser: Browser;
  let page: Page;
  let cardId = '';
  /** Uncaught errors of the page. */
  const thrown: string[] = [];

  const card = async (): Promise<{ title: string; content: { chapters: { title: string; tracks: { title: string }[] }[] } }> => {
    const read = await t.call('GET', `/content/${cardId}`, { token });
    expect(read.status).toBe(200);
    return read.body.card;
  };
  const trackTitles = async (): Promise<string[]> => (await card()).content.chapters.flatMap((c) => c.tracks.map((tr) => tr.title));
  const shownTracks = (): Promise<string[]> => page.locator('.tracks input[id^="track-"]').evaluateAll((inputs) => inputs.map((i) => (i as unknown as { value: string }).value));
  const title = (): ReturnType<Page['getByLabel']> => page.getByLabel('Title', { exact: true });
  const openEditor = async (): Promise<void> => {
    await page.goto(`${base}/app/cards/${encodeURIComponent(cardId)}`);
    await expect.poll(() => title().inputValue()).not.toBe('');
  };
  /** Saves and waits for the server's answer ("Saved." may be on the page from before). */
  const save = async (): Promise<void> => {
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/content' && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Save' }).click();
    expect((await answered).status()).toBe(200);
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  };
  /** axe and no sideways scrolling, at 1280 px and at 375 px. */
  const accessibleAtBothWidths = async (what: string): Promise<void> => {
    await expectAccessible(page, `${what}, 1280 px`);
    await page.setViewportSize({ width: 375, height: 740 });
    try {
      await expectAccessible(page, `${what}, 375 px`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  };

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
    token = await t.token(userId);
    const trackUrl = await audioRef(t, token, 1, 440);
    const tracks = TRACKS.map((name, i) => ({ key: `0${i + 1}`, title: name, trackUrl, type: 'audio', format: 'aac' }));
    const made = await t.call('POST', '/content', { token, body: { title: TITLE, content: { chapters: [{ key: '01', title: 'Bears', tracks }] } } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    cardId = made.body.card.cardId as string;

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
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
  // Every test starts from the stored card, with no question pending.
  beforeEach(async () => {
    page.removeAllListeners('dialog');
    page.on('dialog', (d) => void d.accept());
    await openEditor();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('typing 150 characters into the title stops at 100, the counter showing it', async () => {
    await title().fill('');
    await title().pressSequentially('a'.repeat(150));
    expect(await title().inputValue()).toHaveLength(100);
    await page.getByText('100 of 100 characters').waitFor();
    await page.getByRole('status').filter({ hasText: 'a title can have 100 characters' }).waitFor();
    // The counter is the field's description: read with it.
    expect(await title().getAttribute('aria-describedby')).toContain('title-count');
    await accessibleAtBothWidths('editor, title at its limit');
    expect(thrown).toEqual([]);
  });

  it('a save the server refuses is said in words beside Save, the title marked, the edits kept', async () => {
    // A title past the limit, as a field without its maxlength would send it (an older page, a paste tool).
    await page.evaluate("document.getElementById('title').removeAttribute('maxlength')");
    const long = 'b'.repeat(150);
    await title().fill(long);
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/content' && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Save' }).click();
    expect((await answered).status()).toBe(400);
    const said = page.getByRole('alert').filter({ hasText: 'Could not save: the title can have at most 100 characters.' });
    await said.waitFor();
    expect(await said.innerText()).not.toContain('body/title');
    const saveBox = (await page.getByRole('button', { name: 'Save' }).boundingBox())!;
    const saidBox = (await said.boundingBox())!;
    expect(saidBox.y).toBeGreaterThanOrEqual(saveBox.y);
    expect(saidBox.y - (saveBox.y + saveBox.height)).toBeLessThan(60);
    expect(await title().inputValue()).toBe(long);
    expect(await title().getAttribute('aria-invalid')).toBe('true');
    expect((await card()).title).toBe(TITLE);
    await accessibleAtBothWidths('editor, save refused');
    // Put right, it saves; the mark and the message go.
    await title().fill(TITLE);
    await save();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await title().getAttribute('aria-invalid')).toBeNull();
  });

  it('a track deleted comes back at its place with Undo; one deleted and saved is gone from the card', async () => {
    await page.getByRole('button', { name: 'Delete track Mama' }).click();
    expect(await shownTracks()).toEqual(['Papa', 'Baby']);
    const notice = page.getByRole('status').filter({ hasText: 'Track “Mama” deleted.' });
    await notice.waitFor();
    // The Undo takes the focus (the deleted row's button went with the row).
    expect(await page.evaluate<string>('document.activeElement?.textContent ?? ""')).toBe('Undo');
    await accessibleAtBothWidths('editor, track deleted');
    await page.keyboard.press('Enter');
    expect(await shownTracks()).toEqual(TRACKS);
    await page.getByRole('status').filter({ hasText: 'Restored.' }).waitFor();
    await expect.poll(() => page.evaluate<string>('document.activeElement?.value ?? ""')).toBe('Mama');
    // Undone, nothing is left to save: leaving does not ask.
    await page.getByRole('link', { name: 'My cards', exact: true }).click();
    await page.getByRole('heading', { name: 'My cards', level: 1 }).waitFor();
    expect(await trackTitles()).toEqual(TRACKS);

    await openEditor();
    await page.getByRole('button', { name: 'Delete track Papa' }).click();
    await save();
    expect(await trackTitles()).toEqual(['Mama', 'Baby']);
    // Saved, the deletion is no longer offered to undo.
    expect(await page.getByRole('button', { name: 'Undo' }).count()).toBe(0);
  });

  it('leaving with unsaved edits asks: Stay keeps them, Leave goes; after a save it does not ask', async () => {
    // Into the editor from My cards, in the app: the browser's Back is then the app's to answer.
    await page.goto(`${base}/app/`);
    await page.getByRole('link', { name: `Edit ${TITLE}` }).click();
    await expect.poll(() => title().inputValue()).toBe(TITLE);
    await title().fill('Three bears, renamed');
    // In the app: a link of the menu.
    await page.getByRole('link', { name: 'My cards', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Leave without saving?' });
    await dialog.waitFor();
    expect(await page.evaluate<string>('document.activeElement?.textContent ?? ""')).toBe('Stay and keep editing');
    await accessibleAtBothWidths('editor, leave without saving?');
    await dialog.getByRole('button', { name: 'Stay and keep editing' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(new URL(page.url()).pathname).toBe(`/app/cards/${cardId}`);
    expect(await title().inputValue()).toBe('Three bears, renamed');
    // Escape is staying too.
    await page.getByRole('link', { name: 'Family', exact: true }).click();
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await title().inputValue()).toBe('Three bears, renamed');
    // The browser's own back button asks as well.
    await page.goBack();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Stay and keep editing' }).click();
    expect(new URL(page.url()).pathname).toBe(`/app/cards/${cardId}`);

    // The browser's own question, on a reload: asked (and answered "stay": the edit is still there).
    const asked: string[] = [];
    page.removeAllListeners('dialog');
    page.on('dialog', (d) => {
      asked.push(d.type());
      void d.dismiss();
    });
    await page.evaluate('location.reload()');
    await expect.poll(() => asked).toEqual(['beforeunload']);
    expect(await title().inputValue()).toBe('Three bears, renamed');

    // Leave: the edits go, the card is as stored.
    await page.getByRole('link', { name: 'My cards', exact: true }).click();
    await dialog.getByRole('button', { name: 'Leave without saving' }).click();
    await page.getByRole('heading', { name: 'My cards', level: 1 }).waitFor();
    // The editor gone with its question for the browser, before the browser is sent elsewhere.
    await title().waitFor({ state: 'detached' });
    expect((await card()).title).toBe(TITLE);

    // Saved: no question, in the app or from the browser.
    await openEditor();
    await title().fill('Three bears, saved');
    await save();
    await page.reload();
    await expect.poll(() => title().inputValue()).toBe('Three bears, saved');
    await page.getByRole('link', { name: 'My cards', exact: true }).click();
    await page.getByRole('heading', { name: 'My cards', level: 1 }).waitFor();
    expect(asked).toEqual(['beforeunload']);
    expect(await dialog.count()).toBe(0);
    expect(thrown).toEqual([]);
  });
});
