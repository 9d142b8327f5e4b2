import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { freePort } from '../support/free-port.js';
import { ffmpeg } from '../support/media.js';
import { CHROMIUM, expectAccessible, expectBuildCurrent, haveBrowser } from '../support/pages-browser.js';
import { runCli, startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

const run = promisify(execFile);

/**
 * The family library (issue 35, rows 9 and 10) in Debian's Chromium against a real `cardshelf
 * serve` seeded with the demo: groups as WAI-ARIA tabs by keyboard, the group in the address,
 * honest empty states, deleting a group after asking; one "Play on…" menu per card, by keyboard,
 * with a second browser context as the player "Kitchen" and a never-opened player "Hall"
 * (offline); a player that closes stops showing "playing". The web app signs in with no consent
 * page (row 12). Built app as test/browser/web-app-browser.test.ts expects (`npm run build:web` first).
 */
describe.skipIf(!haveBrowser)(`the family library in Chromium on ${testDialect()}`, { timeout: 240_000 }, () => {
  let deployment: Deployment;
  let server: ServerProcess;
  let browser: Browser;
  let demo: { email: string; password: string };
  let files: string;
  let parent: Page;
  let player: Page;
  const problems: string[] = [];
  const groupIds: Record<string, string> = {};

  function watch(page: Page): Page {
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && new URL(page.url()).pathname.startsWith('/app')) problems.push(`console: ${msg.text()} ${msg.location().url}`);
    });
    return page;
  }

  const token = (): Promise<string> => parent.evaluate<string>("JSON.parse(sessionStorage.getItem('cardshelf:tokens')).accessToken");
  const api = async (method: string, url: string, body?: unknown): Promise<{ status: number; json: unknown }> => {
    const answer = await fetch(`${server.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${await token()}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: answer.status, json: answer.status === 204 ? undefined : await answer.json() };
  };
  /** The focused element: its role, accessible text and whether it is a selected tab. */
  const focused = (p: Page): Promise<{ role: string | null; text: string; selected: string | null }> =>
    p.evaluate("(() => { const e = document.activeElement; return { role: e.getAttribute('role'), text: (e.getAttribute('aria-label') ?? e.textContent ?? '').trim(), selected: e.getAttribute('aria-selected') }; })()");

  /** From /app/: the server's sign-in page, then straight back in the app: no consent page for Cardshelf's own app. */
  async function signIn(p: Page, at = '/app/'): Promise<void> {
    await p.goto(`${server.url}${at}`);
    await p.getByRole('heading', { name: 'Welcome to Cardshelf' }).waitFor();
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    expect(await p.content()).not.toContain('cardshelf-web');
    await p.getByLabel('Email').fill(demo.email);
    await p.getByLabel('Password').fill(demo.password);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p.waitForURL(/\/app\//, { timeout: 10_000 });
    expect(await p.getByRole('heading', { name: 'Approve this app?' }).count()).toBe(0);
  }

  beforeAll(async () => {
    await expectBuildCurrent();
    deployment = await createDeployment();
    const seeded = runCli(['seed', '--demo'], deployment.env);
    expect((await seeded.exited).code, seeded.stderr()).toBe(0);
    const [, email = '', password = ''] = /sign in as (\S+) with the password (\S+)/.exec(seeded.stderr()) ?? [];
    demo = { email, password };
    const port = await freePort();
    server = await startServer({ ...deployment.env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--autoplay-policy=no-user-gesture-required'] });
    files = await mkdtemp(path.join(tmpdir(), 'cardshelf-library-'));
    await run(ffmpeg(), ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=30', '-c:a', 'libmp3lame', '-b:a', '64k', path.join(files, 'Morning.mp3')]);
    parent = watch(await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage());
    player = watch(await (await browser.newContext()).newPage());
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
    if (files) await rm(files, { recursive: true, force: true });
  });

  it('the parent signs in with no consent page and makes a card (it is in the library); two groups, one empty', async () => {
    await signIn(parent);
    await parent.getByRole('button', { name: 'Make a card' }).click();
    await parent.getByLabel('Title', { exact: true }).fill('Our day');
    await parent.locator('#files').setInputFiles([path.join(files, 'Morning.mp3')]);
    await expect.poll(() => parent.locator('.uploads li.done').count(), { timeout: 60_000 }).toBe(1);
    await parent.getByRole('button', { name: 'Save' }).click();
    await parent.waitForURL(/\/app\/cards\/(?!new)/);
    const cardId = decodeURIComponent(new URL(parent.url()).pathname.split('/').pop()!);
    for (const [name, items] of [['Our shelf', [{ contentId: cardId }]], ['Empty shelf', []]] as const) {
      const made = await api('POST', '/card/family/library/groups', { name, imageId: 'fp-cards', items });
      expect(made.status, JSON.stringify(made.json)).toBe(201);
      groupIds[name] = (made.json as { id: string }).id;
    }
  });

  it('tabs by arrow keys: focus and selection move together, wrap, Home and End; the chosen group is in the address', async () => {
    await parent.goto(`${server.url}/app/library`);
    const all = parent.getByRole('tab', { name: 'All cards' });
    await expect.poll(() => all.getAttribute('aria-selected')).toBe('true');
    // One tab in the Tab order: the chosen one.
    expect(await parent.locator('[role=tab][tabindex="0"]').count()).toBe(1);
    // The demo has groups of its own: the order is the tab list's (groups oldest first, ours last).
    const names = await parent.getByRole('tab').allInnerTexts();
    const last = names.length - 1;
    expect(names[0]).toBe('All cards');
    expect(names[last]).toBe('Empty shelf');
    await all.focus();
    await parent.keyboard.press('ArrowRight');
    expect(await focused(parent)).toEqual({ role: 'tab', text: names[1], selected: 'true' });
    await parent.waitForURL(/\/app\/library\/[^/]+$/);
    expect(await all.getAttribute('aria-selected')).toBe('false');
    expect(await all.getAttribute('tabindex')).toBe('-1');
    await parent.keyboard.press('End');
    expect(await focused(parent)).toEqual({ role: 'tab', text: 'Empty shelf', selected: 'true' });
    await parent.waitForURL(`${server.url}/app/library/${groupIds['Empty shelf']}`);
    await parent.keyboard.press('ArrowRight');
    expect(await focused(parent)).toEqual({ role: 'tab', text: 'All cards', selected: 'true' });
    await parent.waitForURL(`${server.url}/app/library`);
    await parent.keyboard.press('ArrowLeft');
    expect(await focused(parent)).toEqual({ role: 'tab', text: 'Empty shelf', selected: 'true' });
    await parent.keyboard.press('ArrowLeft');
    expect(await focused(parent)).toEqual({ role: 'tab', text: names[last - 1], selected: 'true' });
    await parent.keyboard.press('Home');
    expect(await focused(parent)).toEqual({ role: 'tab', text: 'All cards', selected: 'true' });
    // The panel is the chosen tab's.
    const panel = parent.getByRole('tabpanel');
    expect(await panel.getAttribute('aria-labelledby')).toBe(await all.getAttribute('id'));
    expect(await all.getAttribute('aria-controls')).toBe(await panel.getAttribute('id'));
  });

  it('the group in the address is chosen on load and on reload, and back and forward restore it; an unknown one says so', async () => {
    await parent.goto(`${server.url}/app/library/${groupIds['Our shelf']}`);
    await expect.poll(() => parent.getByRole('tab', { name: 'Our shelf' }).getAttribute('aria-selected')).toBe('true');
    await parent.getByRole('tab', { name: 'Empty shelf' }).click();
    await parent.waitForURL(`${server.url}/app/library/${groupIds['Empty shelf']}`);
    await parent.reload();
    await expect.poll(() => parent.getByRole('tab', { name: 'Empty shelf' }).getAttribute('aria-selected')).toBe('true');
    await parent.goBack();
    await expect.poll(() => parent.getByRole('tab', { name: 'Our shelf' }).getAttribute('aria-selected')).toBe('true');
    expect(await parent.getByRole('tabpanel').getByRole('heading', { name: 'Our day' }).count()).toBe(1);
    await parent.goForward();
    await expect.poll(() => parent.getByRole('tab', { name: 'Empty shelf' }).getAttribute('aria-selected')).toBe('true');

    await parent.goto(`${server.url}/app/library/no-such-group`);
    await parent.getByText('There is no such group: it may have been deleted.').waitFor();
    expect(await parent.locator('[role=tab][aria-selected=true]').count()).toBe(0);
    // Still one way into the tabs by Tab.
    expect(await parent.locator('[role=tab][tabindex="0"]').count()).toBe(1);
  });

  it('an empty group says it is empty and how to fill it, not that the library is empty', async () => {
    await parent.goto(`${server.url}/app/library/${groupIds['Empty shelf']}`);
    const panel = parent.getByRole('tabpanel');
    await panel.getByText('No cards in Empty shelf yet. Tick the cards below to put them in this group.').waitFor();
    expect(await panel.getByText('The library is empty.').count()).toBe(0);
    expect(await panel.getByRole('checkbox', { name: 'Our day in this group' }).count()).toBe(1);
  });

  it('deleting a group asks first: "Keep it" keeps it, "Delete the group" deletes it and shows all cards', async () => {
    const id = groupIds['Empty shelf']!;
    await parent.getByRole('button', { name: 'Delete Empty shelf' }).click();
    const dialog = parent.getByRole('dialog', { name: 'Delete the group Empty shelf?' });
    await dialog.waitFor();
    // The safe answer has the focus; axe on the page with the dialog open.
    expect((await focused(parent)).text).toBe('Keep it');
    await expectAccessible(parent, 'the delete dialog at 1280 px');
    await parent.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    expect((await api('GET', `/card/family/library/groups/${id}`)).status).toBe(200);
    expect((await focused(parent)).text).toBe('Delete Empty shelf');

    // Escape cancels too.
    await parent.keyboard.press('Enter');
    await dialog.waitFor();
    await parent.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect((await api('GET', `/card/family/library/groups/${id}`)).status).toBe(200);

    await parent.getByRole('button', { name: 'Delete Empty shelf' }).click();
    await dialog.getByRole('button', { name: 'Delete the group' }).click();
    await parent.getByRole('status').filter({ hasText: 'Group Empty shelf deleted.' }).waitFor();
    expect((await api('GET', `/card/family/library/groups/${id}`)).status).toBe(404);
    await parent.waitForURL(`${server.url}/app/library`);
    expect(await parent.getByRole('tab', { name: 'Empty shelf' }).count()).toBe(0);
    await expect.poll(() => parent.getByRole('tab', { name: 'All cards' }).getAttribute('aria-selected')).toBe('true');
  });

  it('"Play on…" by keyboard: Hall (offline) is marked and not offered; Kitchen (online) plays the card', async () => {
    // Hall: registered, never opened, so offline.
    expect((await api('POST', '/device-v2/devices/mine', { name: 'Hall' })).status).toBe(201);
    await signIn(player, '/app/be-player');
    await player.getByLabel('Player name').fill('Kitchen');
    await player.getByRole('button', { name: 'Make it a player' }).click();
    await player.getByRole('status').filter({ hasText: 'Connected' }).waitFor();

    await parent.goto(`${server.url}/app/library`);
    const button = parent.getByRole('button', { name: 'Play on…, Our day' });
    expect(await button.getAttribute('aria-haspopup')).toBe('menu');
    expect(await button.getAttribute('aria-expanded')).toBe('false');
    const menu = parent.getByRole('menu', { name: 'Players for Our day' });
    // Kitchen's report reaches the page by the live events.
    await button.focus();
    await parent.keyboard.press('ArrowDown');
    await menu.waitFor();
    await expect.poll(async () => (await focused(parent)).role).toBe('menuitem');
    expect(await button.getAttribute('aria-expanded')).toBe('true');
    await expect.poll(() => menu.getByRole('menuitem', { name: 'Kitchen: online, nothing playing' }).count(), { timeout: 10_000 }).toBe(1);
    const hall = menu.getByRole('menuitem', { name: 'Hall: offline' });
    expect(await hall.getAttribute('aria-disabled')).toBe('true');
    await expectAccessible(parent, 'the open Play on menu at 1280 px');

    // Keyboard: the items in order (the demo's players, Hall, Kitchen), wrapping; Hall cannot be chosen.
    const order = await menu.getByRole('menuitem').allInnerTexts();
    const hallAt = order.indexOf('Hall: offline');
    const kitchenAt = order.indexOf('Kitchen: online, nothing playing');
    expect(hallAt).toBeGreaterThanOrEqual(0);
    expect(kitchenAt).toBeGreaterThanOrEqual(0);
    await parent.keyboard.press('Home');
    for (let i = 0; i < hallAt; i++) await parent.keyboard.press('ArrowDown');
    expect((await focused(parent)).text).toBe('Hall: offline');
    await parent.keyboard.press('Enter');
    expect(await menu.isVisible()).toBe(true);
    expect(await parent.getByText('Sent to Hall.').count()).toBe(0);
    await parent.keyboard.press('End');
    expect((await focused(parent)).text).toBe(order[order.length - 1]);
    await parent.keyboard.press('ArrowDown');
    expect((await focused(parent)).text).toBe(order[0]);
    await parent.keyboard.press('Escape');
    await menu.waitFor({ state: 'hidden' });
    expect((await focused(parent)).text).toBe('Play on…, Our day');

    await parent.keyboard.press('ArrowDown');
    await expect.poll(async () => (await focused(parent)).text).toBe(order[0]);
    for (let i = 0; i < kitchenAt; i++) await parent.keyboard.press('ArrowDown');
    expect((await focused(parent)).text).toBe('Kitchen: online, nothing playing');
    await parent.keyboard.press('Enter');
    await parent.getByRole('status').filter({ hasText: 'Sent to Kitchen.' }).waitFor();
    await menu.waitFor({ state: 'hidden' });
    await player.getByRole('heading', { name: 'Our day', level: 1 }).waitFor({ timeout: 10_000 });
    await button.click();
    await menu.getByRole('menuitem', { name: 'Kitchen: playing “Our day”' }).waitFor({ timeout: 10_000 });
  });

  it('a player that closes stops showing "playing"', async () => {
    const menu = parent.getByRole('menu', { name: 'Players for Our day' });
    await player.close({ runBeforeUnload: true });
    await menu.getByRole('menuitem', { name: /^Kitchen: (online, nothing playing|offline)$/ }).waitFor({ timeout: 10_000 });
    expect(await menu.getByText('playing “Our day”').count()).toBe(0);
  });

  it('axe 0 and no sideways scrolling at 375 px, menu and tabs included', async () => {
    const small = watch(await (await browser.newContext({ viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true })).newPage());
    const previous = parent;
    parent = small;
    try {
      await signIn(small, `/app/library/${groupIds['Our shelf']}`);
      await expect.poll(() => small.getByRole('tab', { name: 'Our shelf' }).getAttribute('aria-selected'), { timeout: 10_000 }).toBe('true');
      await expectAccessible(small, 'a group at 375 px');
      await small.getByRole('button', { name: 'Play on…, Our day' }).click();
      await small.getByRole('menu', { name: 'Players for Our day' }).waitFor();
      await expectAccessible(small, 'the open Play on menu at 375 px');
      await small.keyboard.press('Escape');
      await small.getByRole('button', { name: 'Delete Our shelf' }).click();
      await small.getByRole('dialog', { name: 'Delete the group Our shelf?' }).waitFor();
      await expectAccessible(small, 'the delete dialog at 375 px');
      await small.keyboard.press('Escape');
      await small.goto(`${server.url}/app/library`);
      await small.getByRole('tab', { name: 'All cards' }).waitFor();
      await expectAccessible(small, 'all cards at 375 px');
      await expectAccessible(previous, 'the library at 1280 px');
    } finally {
      parent = previous;
    }
  });

  it('no console errors on the pages', () => {
    expect(problems).toEqual([]);
  });
});
