/**
 * `npm run bench:player-browser [-- --tries 20]`: issue 22's figure, command-to-playing latency.
 * From sending `POST /device-v2/{id}/command` (card-play) to the browser player's audio element
 * firing `playing` for the track the command named: the page at /app/be-player in Debian's
 * Chromium (CHROMIUM_PATH), registered as a player of the family, launched with
 * --autoplay-policy=no-user-gesture-required as test/browser/web-player-browser.test.ts is (a real tablet
 * shows "Start" once). Each try plays another card or chapter (four tracks, each its own tone), so
 * each is a real change of track: the server's command, the player's stream, its read of the card
 * (`GET /card/{id}?playable=true`), the audio's load and start.
 *
 * One clock: the send time is the system clock (`Date.now()`) in this process, the `playing` time
 * the same clock in the page (`Date.now()`, recorded by a listener the bench installs). One app in
 * this process on SQLite in a new directory, listening on loopback; the built web app of dist/app
 * (built first when missing or older than web/src). Prints p50, p99 and max and the load average.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { buildApp } from '../src/app.js';
import { loadOrCreateSigningKey, mintToken } from '../src/auth/local-issuer.js';
import { loadConfig } from '../src/config.js';
import { WEB_APP_DIR } from '../src/http/web-app.js';
import { findBinaries, requireBinaries } from '../src/modules/media/transcoder.js';
import { rootDir } from './paths.js';

const run = promisify(execFile);
const { values } = parseArgs({ options: { tries: { type: 'string', default: '20' } } });
const tries = Number(values.tries);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The newest modification time under `dir`, in ms. */
async function newest(dir: string): Promise<number> {
  let latest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, (await stat(path.join(entry.parentPath, entry.name))).mtimeMs);
  }
  return latest;
}

// The page is the built app: build it when it is missing or older than its sources.
const builtIndex = path.join(WEB_APP_DIR, 'index.html');
if (!existsSync(builtIndex) || (await stat(builtIndex)).mtimeMs < (await newest(path.join(rootDir, 'web', 'src')))) {
  process.stderr.write('building the web app (npm run build:web)\n');
  await run('npm', ['run', 'build:web'], { cwd: rootDir });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cardshelf-bench-player-browser-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: String(port), PUBLIC_BASE_URL: base });
if (config.auth.mode !== 'local') throw new Error('needs the local issuer');
if (config.database.kind !== 'sqlite') throw new Error('runs on SQLite (leave DATABASE_URL unset)');
const app = await buildApp(config);
await app.listen({ port, host: '127.0.0.1' });

const key = await loadOrCreateSigningKey(config.auth.keyFile);
const parent = await mintToken(key, {
  sub: `bench|parent-${process.pid}`,
  scope: 'user:content:manage family:library:manage',
  expiresIn: '1h',
  issuer: config.auth.issuer,
  audience: config.auth.audience,
});

async function call<T = unknown>(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(url.startsWith('http') ? url : `${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${parent}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined || body instanceof Buffer ? (body as Buffer | undefined) : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A tone of 20 s at `hz` uploaded and transcoded: its hash, for a track's `service:#` URL. */
async function tone(hz: number): Promise<string> {
  const file = path.join(dataDir, `tone-${hz}.mp3`);
  const { ffmpeg } = requireBinaries(findBinaries(loadConfig().media));
  await run(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=${hz}:duration=20`, '-c:a', 'libmp3lame', '-b:a', '64k', file]);
  const { upload } = await call<{ upload: { uploadId: string; uploadUrl: string } }>('GET', '/media/transcode/audio/uploadUrl');
  await call('PUT', upload.uploadUrl, await readFile(file), { 'content-type': 'audio/mpeg' });
  for (;;) {
    const { transcode } = await call<{ transcode: { transcodedSha256?: string } }>('GET', `/media/upload/${upload.uploadId}/transcoded`);
    if (transcode.transcodedSha256) return transcode.transcodedSha256;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A card of two chapters, one track each, in the family library: its id. */
async function card(title: string, hashes: [string, string]): Promise<string> {
  const chapters = hashes.map((hash, i) => {
    const key = String(i + 1).padStart(2, '0');
    return { key, title: `Chapter ${i + 1}`, tracks: [{ key: '01', title: `Tone ${i + 1}`, type: 'audio', trackUrl: `service:#${hash}` }] };
  });
  const { card: made } = await call<{ card: { cardId: string } }>('POST', '/content', { title, content: { chapters } });
  await call('POST', '/card/family/library', { cardId: made.cardId });
  return made.cardId;
}

const hashes = [await tone(440), await tone(550), await tone(660), await tone(770)];
const cards = [await card('Bench A', [hashes[0]!, hashes[1]!]), await card('Bench B', [hashes[2]!, hashes[3]!])];
/** What each try plays: card and chapter, each a track other than the one before. */
const plays = [0, 1, 2, 3].map((i) => ({ cardId: cards[i % 2]!, chapterKey: i < 2 ? '01' : '02', hash: hashes[(i % 2) * 2 + (i < 2 ? 0 : 1)]! }));

const { device, credential } = await call<{ device: { deviceId: string; name: string }; credential: { accessToken: string } }>('POST', '/device-v2/devices/mine', {
  name: 'Kitchen',
});

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--autoplay-policy=no-user-gesture-required'] });
const chromiumVersion = browser.version();
const latencies: number[] = [];
const loadBefore = os.loadavg();
try {
  const page = await (await browser.newContext()).newPage();
  page.on('pageerror', (err) => process.stderr.write(`page error: ${err.message}\n`));
  // The page is a player from its first load: its credential where web/src/player-credential.ts keeps it.
  const stored = JSON.stringify({ deviceId: device.deviceId, name: device.name, accessToken: credential.accessToken });
  await page.addInitScript(`localStorage.setItem('cardshelf:player', ${JSON.stringify(stored)});
    window.__playing = [];
    // Media events do not bubble; a capturing listener on the document sees the audio element's.
    document.addEventListener('playing', (e) => window.__playing.push({ at: Date.now(), src: e.target.currentSrc }), true);`);
  await page.goto(`${base}/app/be-player`);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 30_000 });
  // Online for the server (its first report is in), so the command is not refused.
  for (let i = 0; ; i++) {
    const status = await call<{ isOnline: boolean }>('GET', `/device-v2/${device.deviceId}/status`);
    if (status.isOnline) break;
    if (i > 100) throw new Error('the player did not come online');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  for (let i = 0; i < tries; i++) {
    const seen = await page.evaluate<number>('window.__playing.length');
    const sent = Date.now();
    const { hash, ...play } = plays[i % plays.length]!;
    await call('POST', `/device-v2/${device.deviceId}/command`, { command: 'card-play', ...play });
    // The first `playing` after the send of the track the command named (its URL names its
    // media's hash, media/files/{hash}). Polled from here (the page's policy allows no eval, so
    // no waitForFunction); the time is the page's record.
    const hit = `window.__playing.slice(${seen}).find((p) => p.src.includes(${JSON.stringify(`/${hash}`)}))?.at ?? null`;
    let at: number | null = null;
    for (const giveUp = Date.now() + 10_000; at === null; await new Promise((resolve) => setTimeout(resolve, 20))) {
      if (Date.now() > giveUp) throw new Error(`try ${i + 1}: no playing within 10 s`);
      at = await page.evaluate<number | null>(hit);
    }
    latencies.push(at - sent);
    // Let it play a moment, as a listener would, before the next change.
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
} finally {
  await browser.close();
  await app.close();
  await rm(dataDir, { recursive: true, force: true });
}

const quantile = (xs: number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};
const load = (l: number[]): string => l.map((x) => x.toFixed(2)).join(' ');
process.stdout.write(
  `sqlite, Chromium ${chromiumVersion}, ${os.cpus().length} CPUs (shared), load average ${load(loadBefore)} before, ${load(os.loadavg())} after\n` +
    `command -> audio playing: p50 ${quantile(latencies, 0.5)} ms, p99 ${quantile(latencies, 0.99)} ms, max ${Math.max(...latencies)} ms ` +
    `(${latencies.length} tries; all: ${latencies.join(' ')})\n`,
);
