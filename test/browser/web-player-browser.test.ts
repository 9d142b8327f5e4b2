import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AxeBuilder } from '@axe-core/playwright';
import { connectAsync } from 'mqtt';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { freePort } from '../support/free-port.js';
import { ffmpeg } from '../support/media.js';
import { runCli, startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

/**
 * The browser player (/app/be-player) and its controls, in Debian's Chromium against a real
 * `cardshelf serve` seeded with the demo: two browser contexts, one the player ("Kitchen"), one the
 * parent. The parent presses "Play on Kitchen" in the family library; the player's audio element
 * plays that card; the parent's Family page shows it playing; pause and next work; a network drop
 * of the player is followed by reports again; "Play on" a player that is offline shows the plain
 * 409 refusal. Built app as test/browser/web-app-browser.test.ts expects
 * (`npm run build:web` first). Chromium plays without a gesture here
 * (--autoplay-policy=no-user-gesture-required); a real tablet shows "Start" once.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveBrowser = existsSync(CHROMIUM) || process.env.CI === 'true';
const ARTIFACTS = path.resolve(import.meta.dirname, '..', '.artifacts');
const run = promisify(execFile);

function watch(page: Page, problems: string[]): Page {
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() !== 'error' || !new URL(page.url()).pathname.startsWith('/app')) return;
    // The player's network drop makes its requests fail on purpose.
    if (/net::ERR_INTERNET_DISCONNECTED/.test(msg.text())) return;
    // A command to an offline player is refused on purpose (409), and the browser logs the answer.
    if (/status of 409/.test(msg.text()) && /\/device-v2\/y[0-9a-f]{24}\/command$/.test(msg.location().url)) return;
    problems.push(`console: ${msg.text()} ${msg.location().url}`);
  });
  return page;
}

async function axe(page: Page, name: string): Promise<void> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const violations = result.violations.map((v) => `${name}: ${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(violations).toEqual([]);
  await page.screenshot({ path: path.join(ARTIFACTS, `web-player-${name}.png`), fullPage: true });
}

describe.skipIf(!haveBrowser)(`the browser player in Chromium on ${testDialect()}`, { timeout: 240_000 }, () => {
  let deployment: Deployment;
  let server: ServerProcess;
  let browser: Browser;
  let demo: { email: string; password: string };
  let files: string;
  const problems: string[] = [];
  let parent: Page;
  let player: Page;
  let deviceId = '';

  // Expressions run in the page (as strings: the tests are compiled without the DOM's types).
  const audio = (p: Page): Promise<{ time: number; paused: boolean; src: string }> =>
    p.evaluate("(() => { const a = document.querySelector('audio'); return { time: a.currentTime, paused: a.paused, src: a.currentSrc }; })()");
  const parentToken = (): Promise<string> => parent.evaluate<string>("JSON.parse(sessionStorage.getItem('cardshelf:tokens')).accessToken");
  /** GET /device-v2/{id}/status as the parent: what the family sees of the player. */
  const status = async (): Promise<{ isOnline: boolean; chapterKey: string | null; reportedAt: string; playbackStatus: string }> => {
    const answer = await fetch(`${server.url}/device-v2/${deviceId}/status`, { headers: { authorization: `Bearer ${await parentToken()}` } });
    expect(answer.status).toBe(200);
    return (await answer.json()) as { isOnline: boolean; chapterKey: string | null; reportedAt: string; playbackStatus: string };
  };

  async function signIn(p: Page, at = '/app/'): Promise<void> {
    await p.goto(`${server.url}${at}`);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByLabel('Email').fill(demo.email);
    await p.getByLabel('Password').fill(demo.password);
    await p.getByRole('button', { name: 'Sign in' }).click();
    const approve = p.getByRole('button', { name: 'Approve' });
    await p.waitForURL(/\/interaction\/|\/app\//);
    if (await approve.isVisible().catch(() => false)) await approve.click();
    await p.getByRole('button', { name: 'Sign out' }).waitFor();
  }

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    deployment = await createDeployment();
    const seeded = runCli(['seed', '--demo'], deployment.env);
    expect((await seeded.exited).code, seeded.stderr()).toBe(0);
    const [, email = '', password = ''] = /sign in as (\S+) with the password (\S+)/.exec(seeded.stderr()) ?? [];
    demo = { email, password };
    const port = await freePort();
    server = await startServer({ ...deployment.env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--autoplay-policy=no-user-gesture-required'] });
    files = await mkdtemp(path.join(tmpdir(), 'cardshelf-player-'));
    for (const [name, hz] of [['1 Morning.mp3', 440], ['2 Evening.mp3', 550]] as const) {
      await run(ffmpeg(), ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=${hz}:duration=30`, '-c:a', 'libmp3lame', '-b:a', '64k', path.join(files, name)]);
    }
    parent = watch(await (await browser.newContext()).newPage(), problems);
    player = watch(await (await browser.newContext()).newPage(), problems);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
    if (files) await rm(files, { recursive: true, force: true });
  });

  it('the parent makes a card of two tracks (it is in the family library)', async () => {
    await signIn(parent);
    await parent.getByRole('button', { name: 'Make a card' }).click();
    await parent.getByLabel('Title', { exact: true }).fill('Our day');
    await parent.locator('#files').setInputFiles(['1 Morning.mp3', '2 Evening.mp3'].map((f) => path.join(files, f)));
    await expect.poll(() => parent.locator('.uploads li.done').count(), { timeout: 60_000 }).toBe(2);
    await parent.getByRole('button', { name: 'Save' }).click();
    await parent.waitForURL(/\/app\/cards\/(?!new)/);
  });

  it('a signed-in member makes the other browser a player named Kitchen; it then runs on its credential alone', async () => {
    await signIn(player, '/app/be-player');
    await player.getByRole('heading', { name: 'Make this browser a player' }).waitFor();
    await axe(player, 'register');
    await player.getByLabel('Player name').fill('Kitchen');
    await player.getByRole('button', { name: 'Make it a player' }).click();
    await player.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    const stored = await player.evaluate<{ deviceId: string }>("JSON.parse(localStorage.getItem('cardshelf:player'))");
    deviceId = stored.deviceId;
    expect(deviceId).toMatch(/^y[0-9a-f]{24}$/);
    // Signed out (the member's tokens gone from the tab), the page still runs as the player.
    await player.evaluate("sessionStorage.removeItem('cardshelf:tokens')");
    await player.reload();
    await player.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    await expect.poll(async () => (await status()).isOnline, { timeout: 10_000 }).toBe(true);
    await axe(player, 'waiting');
  });

  it('"Play on Kitchen" in the library: the player plays the card within seconds, the Family page shows it playing', async () => {
    await parent.getByRole('link', { name: 'Family library' }).click();
    await parent.getByRole('button', { name: 'Play on…, Our day' }).click();
    await parent.getByRole('menuitem', { name: 'Kitchen: online, nothing playing' }).click();
    await parent.getByRole('status').filter({ hasText: 'Sent to Kitchen.' }).waitFor();
    const sentAt = Date.now();
    await expect.poll(async () => (await audio(player)).time, { timeout: 5_000, interval: 50 }).toBeGreaterThan(0.2);
    process.stderr.write(`command to audio advancing: ${Date.now() - sentAt} ms\n`);
    await player.getByRole('heading', { name: 'Our day', level: 1 }).waitFor();
    await player.getByText('Morning').first().waitFor();
    await axe(parent, 'library');
    await axe(player, 'playing');
    await parent.getByRole('link', { name: 'Family', exact: true }).click();
    await parent.getByText('Kitchen: online, playing “Our day”').waitFor({ timeout: 10_000 });
    await axe(parent, 'family');
  });

  it('pause and next, from the Family page', async () => {
    await parent.getByRole('button', { name: 'Pause Kitchen' }).click();
    await expect.poll(async () => (await audio(player)).paused, { timeout: 3_000 }).toBe(true);
    await parent.getByText('Kitchen: online, paused: “Our day”').waitFor({ timeout: 10_000 });
    const first = (await audio(player)).src;
    const firstChapter = (await status()).chapterKey;
    expect(firstChapter).toBeTruthy();
    await parent.getByRole('button', { name: 'Resume Kitchen' }).click();
    await expect.poll(async () => (await audio(player)).paused, { timeout: 3_000 }).toBe(false);
    await parent.getByRole('button', { name: 'Next track on Kitchen' }).click();
    await expect.poll(async () => (await audio(player)).src, { timeout: 3_000 }).not.toBe(first);
    await expect.poll(async () => (await audio(player)).time, { timeout: 5_000 }).toBeGreaterThan(0.2);
    // The report names the second chapter now (one chapter per file).
    await expect.poll(async () => (await status()).chapterKey, { timeout: 10_000 }).not.toBe(firstChapter);
  });

  it("after the player's network is cut and restored, it reports again and obeys", async () => {
    const before = (await status()).reportedAt;
    await player.context().setOffline(true);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await player.context().setOffline(false);
    await expect.poll(async () => Date.parse((await status()).reportedAt), { timeout: 15_000 }).toBeGreaterThan(Date.parse(before) + 2_000);
    expect((await status()).playbackStatus).toBe('playing');
    // And it still obeys: its stream is followed again.
    await parent.getByRole('button', { name: 'Pause Kitchen' }).click();
    await expect.poll(async () => (await audio(player)).paused, { timeout: 5_000 }).toBe(true);
  });

  it('Hall, a player that never reported (offline), is marked in the "Play on…" menu and cannot be chosen: nothing is sent', async () => {
    // Registered by the parent but never opened: no status at all, so offline (as a closed page is 30 s after its last report).
    const registered = await fetch(`${server.url}/device-v2/devices/mine`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await parentToken()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Hall' }),
    });
    expect(registered.status).toBe(201);
    await parent.getByRole('link', { name: 'Family library' }).click();
    await parent.reload();
    const kitchenBefore = await audio(player);
    // Offline: marked in the "Play on…" menu and not offered (the server would refuse it, 409).
    await parent.getByRole('button', { name: 'Play on…, Our day' }).click();
    const hall = parent.getByRole('menuitem', { name: 'Hall: offline' });
    expect(await hall.getAttribute('aria-disabled')).toBe('true');
    // Playwright waits for an aria-disabled item to be enabled: the click is forced, as a person could still tap it.
    await hall.click({ force: true });
    await expect(parent.getByRole('status').filter({ hasText: 'Sent to Hall.' }).count()).resolves.toBe(0);
    // Kitchen, online, is not the one that was told to play: its state is as it was.
    expect((await audio(player)).paused).toBe(kitchenBefore.paused);
    expect((await audio(player)).src).toBe(kitchenBefore.src);
    await axe(parent, 'offline-refusal');
  });

  /** POST /device-v2/{id}/command as the parent, as an app sends it. */
  const command = async (body: Record<string, unknown>): Promise<void> => {
    const answer = await fetch(`${server.url}/device-v2/${deviceId}/command`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await parentToken()}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(answer.status, await answer.text()).toBe(200);
  };
  const ourDay = async (): Promise<string> => {
    const answer = await fetch(`${server.url}/content/mine`, { headers: { authorization: `Bearer ${await parentToken()}` } });
    const { cards } = (await answer.json()) as { cards: { cardId: string; title: string }[] };
    return cards.find((c) => c.title === 'Our day')!.cardId;
  };
  const playingNow = async (): Promise<void> => {
    await expect.poll(async () => (await audio(player)).paused, { timeout: 5_000 }).toBe(false);
    await expect.poll(async () => (await audio(player)).time, { timeout: 5_000 }).toBeGreaterThan(0.2);
  };

  it('sleep-timer: a new timer replaces the running one and stops playback after its seconds; 0 cancels it', async () => {
    const cardId = await ourDay();
    await command({ command: 'card-play', cardId });
    await playingNow();
    await command({ command: 'sleep-timer', seconds: 1 });
    await command({ command: 'sleep-timer', seconds: 0 });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await audio(player)).paused).toBe(false);
    await command({ command: 'sleep-timer', seconds: 600 });
    await command({ command: 'sleep-timer', seconds: 2 });
    const setAt = Date.now();
    await expect.poll(async () => (await status()).playbackStatus, { timeout: 10_000, interval: 100 }).toBe('stopped');
    expect(Date.now() - setAt).toBeGreaterThan(1_500);
    expect((await audio(player)).paused).toBe(true);
  });

  it("card-play's cutOff stops playback when the track reaches it", async () => {
    await command({ command: 'card-play', cardId: await ourDay(), secondsIn: 1, cutOff: 3, anyButtonStop: true });
    await playingNow();
    // The status says playing first: the "stopped" the test before left must not pass for the cut-off.
    await expect.poll(async () => (await status()).playbackStatus, { timeout: 10_000, interval: 100 }).toBe('playing');
    await expect.poll(async () => (await status()).playbackStatus, { timeout: 10_000, interval: 100 }).toBe('stopped');
    expect((await audio(player)).paused).toBe(true);
  });

  it('an app over MQTT starts the card on the browser player and sees it play; pause, resume, volume, stop; closed, it goes offline', async () => {
    const token = await parentToken();
    const mine = (await (await fetch(`${server.url}/content/mine`, { headers: { authorization: `Bearer ${token}` } })).json()) as { cards: { cardId: string; title: string }[] };
    const card = mine.cards.find((c) => c.title === 'Our day')!.cardId;
    const app = await connectAsync(`${server.url.replace(/^http/, 'ws')}/mqtt`, {
      username: `_?x-amz-customauthorizer-name=PublicJWTAuthorizer`,
      password: token,
      reconnectPeriod: 0,
    });
    const received: { topic: string; body: any; at: number }[] = [];
    app.on('message', (topic, payload) => received.push({ topic, body: payload.length ? JSON.parse(payload.toString()) : null, at: Date.now() }));
    const seen = async (what: string, match: (m: { topic: string; body: any }) => boolean, after = 0): Promise<{ body: any; at: number }> => {
      await expect.poll(() => received.slice(after).some(match), { timeout: 10_000, message: what }).toBe(true);
      return received.slice(after).find(match)!;
    };
    const send = async (command: string, payload: object = {}): Promise<number> => {
      const at = received.length;
      await app.publishAsync(`device/${deviceId}/command/${command}`, JSON.stringify(payload), { qos: 1 });
      return at;
    };
    try {
      await app.subscribeAsync(['data/events', 'response', 'presence'].map((s) => `device/${deviceId}/${s}`), { qos: 1 });
      let at = await send('card/start', { uri: `https://yoto.io/${card}` });
      const sentAt = Date.now();
      await expect.poll(async () => (await audio(player)).time, { timeout: 5_000, interval: 50 }).toBeGreaterThan(0.2);
      const playing = await seen('data/events playing the card', (m) => m.topic.endsWith('/data/events') && m.body.cardId === card && m.body.playbackStatus === 'playing' && Boolean(m.body.trackKey), at);
      process.stderr.write(`MQTT card/start to data/events playing: ${playing.at - sentAt} ms\n`);
      expect((await seen('the response', (m) => m.topic.endsWith('/response'), at)).body.status).toMatchObject({ card: 'OK' });

      at = await send('card/pause');
      await expect.poll(async () => (await audio(player)).paused, { timeout: 5_000 }).toBe(true);
      await seen('data/events paused', (m) => m.topic.endsWith('/data/events') && m.body.playbackStatus === 'paused', at);
      at = await send('card/resume');
      await expect.poll(async () => (await audio(player)).paused, { timeout: 5_000 }).toBe(false);
      at = await send('volume/set', { volume: 25 });
      await expect.poll(() => player.evaluate<number>("document.querySelector('audio').volume"), { timeout: 5_000 }).toBeCloseTo(0.25, 2);
      at = await send('card/stop');
      await seen('data/events stopped', (m) => m.topic.endsWith('/data/events') && m.body.playbackStatus === 'stopped', at);
      at = await send('status/request');

      // The player's page closes: it is offline at once.
      at = received.length;
      await player.close();
      await seen('presence offline', (m) => m.topic.endsWith('/presence') && m.body?.state === 'offline', at);
    } finally {
      await app.endAsync(true);
    }
  });

  it('no console errors on the pages', () => {
    expect(problems).toEqual([]);
  });
});
