import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { freePort } from '../support/free-port.js';
import { CHROMIUM, expectAccessible, expectBuildCurrent, haveBrowser } from '../support/pages-browser.js';
import { runCli, startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

/**
 * The Family page and a player's page (issue 35, rows 6 and 14), in Debian's Chromium against a
 * real `cardshelf serve` seeded with the demo, through the pages alone: the demo parent invites
 * from the Family page; a second browser context opens the link, makes an account, follows the
 * answer page into the app and signs in; the first approves them by name, then removes them
 * (confirmed). No user or device id ever shows. A player's page renames it, changes a setting,
 * shows its reports live and removes it (confirmed); the API reads back each change. axe and no
 * sideways scrolling at 1280 and 375 px. Built app as test/browser/web-app-browser.test.ts expects.
 */
const ARTIFACTS = path.resolve(import.meta.dirname, '..', '.artifacts');
/** What an id looks like here: user ids (`<issuer>|<id>`, the demo's `auth0|demo-...`) and device ids. */
const ID = /[A-Za-z0-9_-]+\|[A-Za-z0-9_-]+|\by[0-9a-f]{24}\b/;
const SECOND = { name: 'Robin Second', email: 'robin.second@example.com', password: 'a long enough password' };

describe.skipIf(!haveBrowser)(`the Family page and a player's page in Chromium on ${testDialect()}`, { timeout: 240_000 }, () => {
  let deployment: Deployment;
  let server: ServerProcess;
  let browser: Browser;
  let demo: { email: string; password: string };
  const problems: string[] = [];
  let first: BrowserContext;
  let parent: Page;
  let second: BrowserContext;
  let joiner: Page;
  let hall: { deviceId: string; token: string };

  const tokenOf = (p: Page): Promise<string> => p.evaluate<string>("JSON.parse(sessionStorage.getItem('cardshelf:tokens')).accessToken");
  const apiGet = async (p: Page, url: string): Promise<any> => {
    const answer = await fetch(`${server.url}${url}`, { headers: { authorization: `Bearer ${await tokenOf(p)}` } });
    expect(answer.status, url).toBe(200);
    return answer.json();
  };
  const members = async (p: Page): Promise<{ userId: string; displayName: string | null; approved: boolean }[]> => (await apiGet(p, '/user/family/members')).members;

  function watch(p: Page): Page {
    p.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    p.on('console', (msg) => {
      if (msg.type() === 'error' && new URL(p.url()).pathname.startsWith('/app')) problems.push(`console: ${msg.text()} ${msg.location().url}`);
    });
    return p;
  }

  /** The app's sign-in, from its Sign in button; the approval is asked once a browser context. */
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

  /** No id in what the page shows, nor in its accessible names (aria-label). */
  async function expectNoIds(p: Page): Promise<void> {
    const shown = await p.locator('main').innerText();
    expect(shown).not.toMatch(ID);
    const labels = await p.locator('main [aria-label]').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
    expect(labels.join('\n')).not.toMatch(ID);
  }

  /** axe and no sideways scrolling at 1280 px and at 375 px, with a screenshot of each. */
  async function bothWidths(p: Page, name: string): Promise<void> {
    for (const [width, height] of [[1280, 800], [375, 740]] as const) {
      await p.setViewportSize({ width, height });
      await expectAccessible(p, `${name} at ${width}`);
      await p.screenshot({ path: path.join(ARTIFACTS, `web-family-${name}-${width}.png`), fullPage: true });
    }
    await p.setViewportSize({ width: 1280, height: 800 });
  }

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    await expectBuildCurrent();
    deployment = await createDeployment();
    const seeded = runCli(['seed', '--demo'], deployment.env);
    expect((await seeded.exited).code, seeded.stderr()).toBe(0);
    const [, email = '', password = ''] = /sign in as (\S+) with the password (\S+)/.exec(seeded.stderr()) ?? [];
    demo = { email, password };
    const port = await freePort();
    server = await startServer({ ...deployment.env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    first = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'], viewport: { width: 1280, height: 800 } });
    parent = watch(await first.newPage());
    second = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    joiner = watch(await second.newPage());
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
  });

  it('the Family page names every member (a member signed in elsewhere as "A parent (joined ...)"), never an id', async () => {
    await parent.goto(`${server.url}/app/family`);
    await signIn(parent, demo);
    await parent.getByText('Demo Parent (you): approved').waitFor();
    await parent.getByText(/^A parent \(joined .+\): approved/).waitFor();
    await parent.getByRole('link', { name: 'Settings of Living room' }).waitFor();
    await expectNoIds(parent);
    await bothWidths(parent, 'family');
  });

  it('invites from the Family page: the link to send, copied', async () => {
    await parent.getByRole('button', { name: 'Invite someone' }).click();
    await parent.getByRole('status').filter({ hasText: 'Invitation made' }).waitFor();
    const link = await parent.getByLabel(/^Invitation link \(until /).inputValue();
    expect(link).toMatch(/\/invitation\/[A-Za-z0-9_-]{43}$/);
    await parent.getByText('Send this link to the person you invite').waitFor();
    await parent.getByRole('button', { name: 'Copy invitation link' }).click();
    await parent.getByRole('status').filter({ hasText: 'Invitation link copied.' }).waitFor();
    expect(await parent.evaluate<string>('navigator.clipboard.readText()')).toBe(link);
    // The open invitation names who made it.
    await parent.getByText(/^Made by Demo Parent \(you\) on .+, expires /).waitFor();
    await expectNoIds(parent);
    await bothWidths(parent, 'invited');

    // The second parent: the link, the form, then the answer page's link into the app, signed in there.
    await joiner.goto(link);
    await joiner.getByLabel('Your name').fill(SECOND.name);
    await joiner.getByLabel('Email').fill(SECOND.email);
    await joiner.getByLabel('Password').fill(SECOND.password);
    await joiner.getByRole('button', { name: 'Make my account' }).click();
    await joiner.getByRole('heading', { name: 'Thank you' }).waitFor();
    await joiner.getByRole('link', { name: 'Open Cardshelf and sign in' }).click();
    await joiner.waitForURL(`${server.url}/app/family`);
    await signIn(joiner, SECOND);
    await joiner.waitForURL(`${server.url}/app/family`);
    await joiner.getByText(`${SECOND.name} (you): waiting for another parent to approve you`).waitFor();
    // A waiting member is offered no approval or removal.
    expect(await joiner.getByRole('button', { name: /^(Approve|Remove) / }).count()).toBe(0);
    await expectNoIds(joiner);
    await bothWidths(joiner, 'joined-waiting');
  });

  it('the first parent approves the second by name; both pages show it without a reload', async () => {
    // Live: the join reached the first parent's open page.
    await parent.getByText(`${SECOND.name}: waiting for your approval`).waitFor({ timeout: 10_000 });
    await parent.evaluate('window.notReloaded = true');
    await parent.getByRole('button', { name: `Approve ${SECOND.name}` }).click();
    await parent.getByRole('status').filter({ hasText: `${SECOND.name} is approved.` }).waitFor();
    expect((await members(parent)).find((m) => m.displayName === SECOND.name)?.approved).toBe(true);
    await joiner.getByText(`${SECOND.name} (you): approved`).waitFor({ timeout: 10_000 });
    expect(await parent.evaluate('window.notReloaded')).toBe(true);
    await expectNoIds(parent);
  });

  it('removing a member asks first; Cancel keeps them, Yes removes them', async () => {
    const remove = parent.getByRole('button', { name: `Remove ${SECOND.name}` });
    await remove.click();
    const question = parent.getByRole('group').filter({ hasText: `Remove ${SECOND.name} from the family?` });
    await question.waitFor();
    await bothWidths(parent, 'remove-member-confirm');
    await question.getByRole('button', { name: 'Cancel' }).click();
    await remove.waitFor();
    expect((await members(parent)).some((m) => m.displayName === SECOND.name)).toBe(true);

    await remove.click();
    await parent.getByRole('button', { name: 'Yes, remove' }).click();
    await parent.getByRole('status').filter({ hasText: `${SECOND.name} is no longer in the family.` }).waitFor();
    expect(await parent.getByText(SECOND.name, { exact: false }).count()).toBe(1); // the status line only
    expect((await members(parent)).map((m) => m.displayName)).not.toContain(SECOND.name);
    await expectNoIds(parent);
  });

  it("a player's page, from the Family page: renamed, a setting changed, both read back through the API", async () => {
    // A player of the family, registered as a browser would be; its credential reports below.
    const registered = await fetch(`${server.url}/device-v2/devices/mine`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await tokenOf(parent)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Hall' }),
    });
    expect(registered.status).toBe(201);
    const made = (await registered.json()) as { device: { deviceId: string }; credential: { accessToken: string } };
    hall = { deviceId: made.device.deviceId, token: made.credential.accessToken };

    await parent.getByRole('link', { name: 'Settings of Hall' }).click();
    await parent.waitForURL(`${server.url}/app/family/players/${hall.deviceId}`);
    await parent.getByRole('heading', { name: 'Player: Hall', level: 1 }).waitFor();
    await parent.getByText('Offline').waitFor();
    await expectNoIds(parent);
    await bothWidths(parent, 'player');

    await parent.getByLabel('Player name').fill('Bedroom');
    await parent.getByRole('button', { name: 'Rename' }).click();
    await parent.getByRole('status').filter({ hasText: 'Renamed to Bedroom.' }).waitFor();
    await parent.getByRole('heading', { name: 'Player: Bedroom', level: 1 }).waitFor();

    await parent.getByLabel('Volume limit at night (0 to 16)').fill('5');
    await parent.getByLabel('Night starts at').fill('20:30');
    await parent.getByRole('button', { name: 'Save settings' }).click();
    await parent.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
    const { device } = (await apiGet(parent, `/device-v2/${hall.deviceId}/config`)) as { device: { name: string; config: Record<string, string> } };
    expect(device.name).toBe('Bedroom');
    expect(device.config).toMatchObject({ nightMaxVolumeLimit: '5', nightTime: '20:30', maxVolumeLimit: '16', dayTime: '07:00' });
    // The page's own limits: the field refuses 17 before anything is sent.
    expect(await parent.getByLabel('Volume limit by day (0 to 16)').evaluate((e) => [e.getAttribute('min'), e.getAttribute('max')])).toEqual(['0', '16']);
  });

  it("the player's status shows live as it reports", async () => {
    await parent.evaluate('window.notReloaded = true');
    const { cards } = (await apiGet(parent, '/content/mine')) as { cards: { cardId: string; title: string }[] };
    const card = cards[0]!;
    const report = await fetch(`${server.url}/device-v2/${hall.deviceId}/status`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${hall.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ activeCard: card.cardId, playbackStatus: 'playing', userVolumePercentage: 40, position: 3, trackLength: 60 }),
    });
    expect(report.status).toBe(200);
    const now = parent.getByTestId('player-now');
    await now.getByText('Online').waitFor({ timeout: 10_000 });
    await now.getByText(`Playing “${card.title}”`).waitFor();
    await now.getByText('Volume 40%').waitFor();
    expect(await parent.evaluate('window.notReloaded')).toBe(true);
    await expectNoIds(parent);
    await bothWidths(parent, 'player-playing');
  });

  it('the player removed from its page, after a confirmation: back on the Family page, gone from the API', async () => {
    await parent.getByRole('button', { name: 'Remove Bedroom' }).click();
    await parent.getByRole('group').filter({ hasText: 'Remove Bedroom from the family?' }).waitFor();
    await bothWidths(parent, 'remove-player-confirm');
    await parent.getByRole('button', { name: 'Yes, remove' }).click();
    await parent.waitForURL(`${server.url}/app/family`);
    await parent.getByRole('heading', { name: 'Family', level: 1 }).waitFor();
    await parent.getByRole('link', { name: 'Settings of Living room' }).waitFor();
    expect(await parent.getByRole('link', { name: 'Settings of Bedroom' }).count()).toBe(0);
    const { devices } = (await apiGet(parent, '/device-v2/devices/mine')) as { devices: { deviceId: string }[] };
    expect(devices.map((d) => d.deviceId)).not.toContain(hall.deviceId);
    // Its credential no longer works.
    expect((await fetch(`${server.url}/device-v2/${hall.deviceId}/status`, { method: 'PUT', headers: { authorization: `Bearer ${hall.token}`, 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
  });

  it('no console errors on the pages', () => {
    expect(problems).toEqual([]);
  });
});
