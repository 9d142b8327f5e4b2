import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { freePort } from '../support/free-port.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { decideAtRemote, makeCard, startRemote, type Remote } from '../support/linked-remote.js';
import { CHROMIUM, expectAccessible, expectLabelled, haveBrowser, tabTo } from '../support/pages-browser.js';
import { testDialect } from '../support/test-database.js';

/**
 * The web app's Linked services page and a card's "Send to" button (issue 34), in Debian's
 * Chromium: this Cardshelf links a second one (a real server on a loopback port, playing the
 * remote) by the remote's device sign-in, its code approved through the remote's own pages in a
 * second browser page; then brings a card home, sends one out and unlinks, by keyboard, checked
 * with axe at 1280 and 375 px. The built app is served (`npm run build:web` first).
 */
const PASSWORD = 'a long enough password';
const SERVICE = 'Other shelf';

describe.skipIf(!haveBrowser)(`linked services in the web app, in Chromium, on ${testDialect()}`, { timeout: 300_000 }, () => {
  let remote: Remote;
  let here: TestApp;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  const me = { email: 'parent@example.com', password: PASSWORD };
  let remoteCard = { cardId: '', title: 'Lullabies' };

  const tokenOf = (p: Page): Promise<string> => p.evaluate<string>("JSON.parse(sessionStorage.getItem('cardshelf:tokens')).accessToken");
  type LinkRead = { linkId: string; verificationUri?: string; verificationUriComplete?: string };
  /** A read through the API as the signed-in page: its status, and its body when 200. */
  const apiGet = async <T>(url: string): Promise<{ status: number; body: T }> => {
    const answer = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${await tokenOf(page)}` } });
    return { status: answer.status, body: (answer.status === 200 ? await answer.json() : undefined) as T };
  };
  const linksNow = async (): Promise<LinkRead[]> => (await apiGet<{ links: LinkRead[] }>('/user/links')).body.links;
  const status = (p: Page, text: string | RegExp) => p.getByRole('status').filter({ hasText: text });

  function watch(p: Page): Page {
    p.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    p.on('console', (msg) => {
      if (msg.type() === 'error' && new URL(p.url()).pathname.startsWith('/app')) problems.push(`console: ${msg.text()} ${msg.location().url}`);
    });
    return p;
  }

  async function signIn(p: Page, at = '/app/'): Promise<void> {
    await p.goto(`${base}${at}`);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByLabel('Email').fill(me.email);
    await p.getByLabel('Password').fill(me.password);
    await p.getByRole('button', { name: 'Sign in' }).click();
    const approve = p.getByRole('button', { name: 'Approve' });
    await Promise.race([approve.waitFor(), p.waitForURL(/\/app\//)]);
    if (await approve.isVisible().catch(() => false)) await approve.click();
    await p.waitForURL(/\/app\//);
    await p.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  /** Types into the focused field what a person would, replacing what is there. */
  async function typeHere(p: Page, text: string): Promise<void> {
    await p.keyboard.press('ControlOrMeta+a');
    await p.keyboard.press('Backspace');
    await p.keyboard.type(text);
  }

  beforeAll(async () => {
    remote = await startRemote({}, testDialect());
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    here = await startTestApp({ PUBLIC_BASE_URL: base }, { dialect: testDialect() });
    await here.app.listen({ port, host: '127.0.0.1' });
    const store = openStore(here.config.database);
    try {
      await createAccountService(store).add({ email: me.email, displayName: 'Pat', password: me.password });
    } finally {
      await store.db.destroy();
    }
    remoteCard = { ...remoteCard, cardId: (await makeCard(remote.t, await remote.token(), remoteCard.title, 1, 1, 440)).cardId };
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = watch(await context.newPage());
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await here?.close();
    await remote?.t.close();
  });

  it('links the other Cardshelf by keyboard: the code and the link to open are shown; approved at its own pages, the link turns linked live', async () => {
    await signIn(page);
    await page.getByRole('link', { name: 'Linked services' }).click();
    await page.getByRole('heading', { name: 'Linked services', level: 1 }).waitFor();
    await page.getByText('No linked service yet').waitFor();
    await expectLabelled(page);
    await expectAccessible(page, 'links, none');

    // The preset fills the public service's addresses, and says its client id is not among them.
    await tabTo(page, 'Use the public service’s addresses');
    await page.keyboard.press('Enter');
    await status(page, /Its client id is not included/).waitFor();
    expect(await page.getByLabel(/^API address/).inputValue()).toBe('https://api.yotoplay.com');
    expect(await page.getByLabel(/^Sign-in address/).inputValue()).toBe('https://login.yotoplay.com');
    expect(await page.getByLabel('Client id').inputValue()).toBe('');

    // Then the other Cardshelf's own, typed field after field.
    await tabTo(page, 'Name (what you call it, e.g. Yoto)');
    await typeHere(page, SERVICE);
    await page.keyboard.press('Tab');
    await typeHere(page, remote.base);
    await page.keyboard.press('Tab');
    await typeHere(page, remote.base);
    await page.keyboard.press('Tab');
    await typeHere(page, 'cardshelf-web-link');
    await page.keyboard.press('Tab');
    // Past the client id's hint (not focusable), the audience: left empty.
    await typeHere(page, '');
    await page.keyboard.press('Enter');

    // The code, prominent, with the remote's own page to open; the focus on it.
    const code = page.locator('.user-code');
    await code.waitFor();
    const userCode = (await code.innerText()).replace(/^Code:\s*/, '').trim();
    expect(userCode).toMatch(/\S{4,}/);
    expect(await page.evaluate<boolean>("document.activeElement?.classList.contains('sign-in') ?? false")).toBe(true);
    await status(page, 'Link started').waitFor();
    await expectAccessible(page, 'links, signing in');
    const open = page.getByRole('link', { name: `Open ${SERVICE}’s sign-in page` });
    const href = (await open.getAttribute('href'))!;
    expect(href.startsWith(`${remote.base}/activate`)).toBe(true);
    const [link] = await linksNow();
    expect(href).toBe(link!.verificationUriComplete ?? link!.verificationUri);

    // At the remote, in another page: its code page, its sign-in, its approval.
    const there = await (await browser.newContext()).newPage();
    await there.goto(href);
    const codeField = there.getByLabel('Code');
    await Promise.race([codeField.waitFor(), there.getByText('Is this your device?').waitFor()]);
    if (await codeField.isVisible().catch(() => false)) {
      await codeField.fill(userCode);
      await there.getByRole('button', { name: 'Continue' }).click();
    }
    await there.getByText('Is this your device?').waitFor();
    await there.getByRole('button', { name: 'Continue' }).click();
    await there.getByLabel('Email').fill(remote.email);
    await there.getByLabel('Password').fill(remote.password);
    await there.getByRole('button', { name: 'Sign in', exact: true }).click();
    await there.getByRole('heading', { name: 'Approve this app?' }).waitFor();
    await there.getByRole('button', { name: 'Approve' }).click();
    await there.getByRole('heading', { name: 'Device connected' }).waitFor();
    await there.close();

    // Here, without a reload (the live events; polling only stands in while they are down): the state, said next to the link.
    expect(await page.evaluate<string | undefined>('document.documentElement.dataset.live')).toBe('open');
    await status(page, `${SERVICE} is linked.`).waitFor({ timeout: 30_000 });
    await page.getByText(`${SERVICE}: linked`).waitFor();
    expect(await code.count()).toBe(0);
    await expectAccessible(page, 'links, linked');
  });

  it('brings all cards home: the copy is followed to done, the card listed with a link to it here; chosen ids copy just those', async () => {
    await tabTo(page, 'Bring all cards home');
    await page.keyboard.press('Enter');
    const job = page.locator('.job').first();
    await job.getByText(/Bringing home, .*: done/).waitFor({ timeout: 120_000 });
    // One track, its icon and the cover.
    await job.getByText('3 of 3 files').waitFor();
    const cardLink = job.getByRole('link', { name: remoteCard.title });
    await cardLink.waitFor();
    expect(await job.innerText()).toContain(`${remoteCard.title}: copied`);
    await expectAccessible(page, 'links, pulled');

    // The card is here, as the API lists it.
    const mine = (await apiGet<{ cards: { cardId: string; title: string }[] }>('/content/mine')).body.cards;
    expect(mine.map((c) => c.title)).toEqual([remoteCard.title]);
    expect(await cardLink.getAttribute('href')).toBe(`/app/cards/${mine[0]!.cardId}`);

    // No ids: said next to the field, nothing sent.
    const idsField = page.getByLabel(/^Card ids at Other shelf/);
    await idsField.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Enter at least one card id.' }).waitFor();
    // One id, with stray separators: that card alone, unchanged since the last copy.
    await idsField.focus();
    await typeHere(page, ` ${remoteCard.cardId}, `);
    await page.keyboard.press('Enter');
    await status(page, 'Copying started').waitFor();
    await page.locator('.job').nth(1).waitFor();
    const newest = page.locator('.job').first();
    await newest.getByText(/Bringing home, .*: done/).waitFor({ timeout: 60_000 });
    expect(await newest.innerText()).toContain(`${remoteCard.title}: already up to date`);
    expect(await idsField.inputValue()).toBe('');

    await cardLink.click();
    await page.getByRole('heading', { name: `Edit “${remoteCard.title}”` }).waitFor();
  });

  it('sends a card made here to the other Cardshelf from its page: the progress announced by the button, the card listed there', async () => {
    const token = await tokenOf(page);
    const made = await makeCard(here, token, 'Made here', 1, 1, 880);
    await page.goto(`${base}/app/cards/${made.cardId}`);
    await page.getByRole('heading', { name: 'Edit “Made here”' }).waitFor();
    const send = page.getByRole('button', { name: `Send to ${SERVICE}` });
    await send.focus();
    await page.keyboard.press('Enter');
    await status(page, `Sent to ${SERVICE}.`).waitFor({ timeout: 120_000 });
    await expectAccessible(page, 'card, sent');
    const theirs = await remote.t.call('GET', '/content/mine', { token: await remote.token() });
    expect((theirs.body as { cards: { title: string }[] }).cards.map((c) => c.title).sort()).toEqual(['Made here', remoteCard.title].sort());
    expect(await page.getByRole('link', { name: 'Linked services' }).count()).toBe(2); // the nav's, and the section's
  });

  it('at 375 px: the page with its link and copies, and a card with its Send button, fit the width and pass axe', async () => {
    const phone = await browser.newContext({ viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
    const small = watch(await phone.newPage());
    await signIn(small, '/app/links');
    await small.getByRole('heading', { name: 'Linked services', level: 1 }).waitFor();
    await small.locator('.job').first().waitFor();
    await expectAccessible(small, 'links at 375 px');
    await small.getByRole('link', { name: remoteCard.title }).first().click();
    await small.getByRole('button', { name: `Send to ${SERVICE}` }).waitFor();
    await expectAccessible(small, 'card at 375 px');
    await phone.close();
  });

  it('unlinks after a confirmation (Cancel keeps it); the page and the API no longer have the link', async () => {
    await page.goto(`${base}/app/links`);
    await page.getByText(`${SERVICE}: linked`).waitFor();
    const [link] = await linksNow();

    await page.getByRole('button', { name: 'Bring these cards home' }).focus();
    await tabTo(page, `Unlink ${SERVICE}`);
    await page.keyboard.press('Enter');
    await page.getByText(`Unlink ${SERVICE}? Its sign-in is forgotten here.`).waitFor();
    await expectAccessible(page, 'links, confirm unlink');
    await tabTo(page, 'Cancel');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: `Unlink ${SERVICE}` }).waitFor();
    expect((await apiGet(`/user/links/${link!.linkId}`)).status).toBe(200);

    await page.getByRole('button', { name: `Unlink ${SERVICE}` }).focus();
    await page.keyboard.press('Enter');
    // The focus is on the question as soon as it shows, before any Tab pressed after it.
    expect(await page.evaluate<string | null>('document.activeElement?.getAttribute("role") ?? null')).toBe('group');
    await tabTo(page, 'Yes, unlink');
    await page.keyboard.press('Enter');
    await status(page, `${SERVICE} is unlinked.`).waitFor();
    await page.getByText('No linked service yet').waitFor();
    await expectAccessible(page, 'links, unlinked');
    expect((await apiGet(`/user/links/${link!.linkId}`)).status).toBe(404);
  });

  it('a sign-in denied at the remote shows the link failed, with the reason; with the live events down, by polling', async () => {
    // Another tab whose event stream the network refuses: the page falls back to reading the link every few seconds.
    const cut = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await cut.route('**/user/family/events', (route) => route.fulfill({ status: 503, body: '' }));
    const p = await cut.newPage();
    p.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    await signIn(p, '/app/links');
    await p.getByText('No linked service yet').waitFor();
    expect(await p.evaluate<string | undefined>('document.documentElement.dataset.live')).not.toBe('open');
    await p.getByLabel('Name (what you call it, e.g. Yoto)').fill('Denied shelf');
    await p.getByLabel(/^API address/).fill(remote.base);
    await p.getByLabel(/^Sign-in address/).fill(remote.base);
    await p.getByLabel('Client id').fill('cardshelf-web-link');
    await p.getByRole('button', { name: 'Link', exact: true }).click();
    const userCode = (await p.locator('.user-code').innerText()).replace(/^Code:\s*/, '').trim();
    await decideAtRemote(remote, userCode, 'deny');
    await p.getByText('Denied shelf: not linked').waitFor({ timeout: 30_000 });
    await p.getByText(/^Linking failed: .*denied/).waitFor();
    await expectAccessible(p, 'links, failed');
    await p.getByRole('button', { name: 'Unlink Denied shelf' }).click();
    await p.getByRole('button', { name: 'Yes, unlink' }).click();
    await p.getByText('No linked service yet').waitFor();
    await cut.close();
    expect(problems).toEqual([]);
  });
});
