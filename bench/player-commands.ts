/**
 * `npx tsx bench/player-commands.ts [--tries 50]`: how long a command takes to reach a
 * registered player (issues 22 and 36), sent by an app over REST and over MQTT, and how long
 * until that app sees the player playing it. Each try starts a card (`card-play` with
 * `secondsIn`), the two ways taking turns:
 *   - REST: `POST /device-v2/{id}/command`; back: the `player.status` event of the player's
 *     report on the parent's `GET /user/family/events`;
 *   - MQTT: `card/start` published on `device/<id>/command/card/start` by an `mqtt` client at
 *     `ws://.../mqtt` (the parent's token); back: `device/<id>/data/events` naming the card at
 *     that position, on the same connection;
 *   - command -> player's stream: from sending to the `player.command` event arriving on the
 *     player's own event stream (which a browser player follows).
 * The player here is a client of the event stream that reports `playing` at the asked position
 * as soon as a command arrives, as the browser player does. Tries are 100 ms apart (a person's
 * pace, under the broker's publish limit). One app in this process, listening
 * on loopback, on SQLite in a new directory (or the PostgreSQL database of DATABASE_URL). The
 * browser's own time to start audio is not in it. Prints p50, p99 and max in milliseconds.
 */
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { connectAsync } from 'mqtt';
import { buildApp } from '../src/app.js';
import { loadOrCreateSigningKey, mintToken } from '../src/auth/local-issuer.js';
import { loadConfig } from '../src/config.js';

const { values } = parseArgs({ options: { tries: { type: 'string', default: '50' } } });
const tries = Number(values.tries);

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cardshelf-bench-players-'));
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
if (config.auth.mode !== 'local') throw new Error('needs the local issuer');
const app = await buildApp(config);
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

const key = await loadOrCreateSigningKey(config.auth.keyFile);
const parent = await mintToken(key, {
  sub: `bench|parent-${process.pid}`,
  scope: 'user:content:manage family:library:manage',
  expiresIn: '1h',
  issuer: config.auth.issuer,
  audience: config.auth.audience,
});

async function call<T = unknown>(method: string, url: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

interface PlayerEvent {
  ids: { deviceId: string; commandId?: string };
  command?: { secondsIn?: number };
  status?: { activeCard: string; position: number };
}

/** Calls `onEvent` with each event of a stream, as it arrives. */
function listen(token: string, onEvent: (kind: string, data: PlayerEvent) => void): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/user/family/events`, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`stream: ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const kind = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (kind && data) onEvent(kind, JSON.parse(data) as PlayerEvent);
        }
      });
      resolve(req);
    });
    req.on('error', reject);
  });
}

const { card } = await call<{ card: { cardId: string } }>('POST', '/content', parent, {
  title: 'Bench',
  content: { chapters: [{ key: '01', title: 'One', tracks: [{ key: '01', title: 'Track', type: 'audio', format: 'aac', trackUrl: 'https://example.invalid/a.aac', duration: 600 }] }] },
});
const { device, credential } = await call<{ device: { deviceId: string }; credential: { accessToken: string } }>('POST', '/device-v2/devices/mine', parent, {
  name: 'Kitchen',
});
const player = credential.accessToken;
const report = (position: number): Promise<unknown> =>
  call('PUT', `/device-v2/${device.deviceId}/status`, player, { activeCard: card.cardId, chapterKey: '01', trackKey: '01', position, trackLength: 600, playbackStatus: 'playing' });
await call('PUT', `/device-v2/${device.deviceId}/status`, player, { playbackStatus: 'stopped', userVolumePercentage: 50 });

/** When each command arrived on the player's stream, by the position it asked for (unique per try). */
const arrived = new Map<number, number>();
// The player: reports playing at the asked position as soon as a command arrives, as the browser player does.
const playerStream = await listen(player, (kind, data) => {
  const at = data.command?.secondsIn;
  if (kind !== 'player.command' || at === undefined) return;
  arrived.set(at, performance.now());
  void report(at);
});
let expected = -1;
let playing: (() => void) | undefined;
const seen = (cardId: string | undefined, position: number | undefined): void => {
  if (cardId === card.cardId && position === expected) playing?.();
};
const parentStream = await listen(parent, (kind, data) => {
  if (kind === 'player.status') seen(data.status?.activeCard, data.status?.position);
});
let closing = false;
const mqttApp = await connectAsync(`${base.replace(/^http/, 'ws')}/mqtt`, {
  username: `${device.deviceId}?x-amz-customauthorizer-name=PublicJWTAuthorizer`,
  password: parent,
  reconnectPeriod: 0,
});
// The broker closes a connection that publishes more than MQTT_PUBLISHES_PER_SECOND (20): the
// tries are paced below it, and a close ends the run rather than leaving a publish unanswered.
mqttApp.on('close', () => {
  if (closing) return;
  process.stderr.write('the MQTT connection was closed by the broker\n');
  process.exit(1);
});
await mqttApp.subscribeAsync(`device/${device.deviceId}/data/events`, { qos: 1 });
mqttApp.on('message', (_topic, payload) => {
  const events = JSON.parse(payload.toString()) as { cardId?: string; position?: number };
  seen(events.cardId, events.position);
});

const sends = {
  REST: (secondsIn: number) => call('POST', `/device-v2/${device.deviceId}/command`, parent, { command: 'card-play', cardId: card.cardId, secondsIn }),
  MQTT: (secondsIn: number) =>
    mqttApp.publishAsync(`device/${device.deviceId}/command/card/start`, JSON.stringify({ uri: `https://yoto.io/${card.cardId}`, secondsIn }), { qos: 1 }),
};
/** Between tries: a person's pace, well under the broker's publish limit. */
const PACE_MS = 100;
const toPlayer = { REST: [] as number[], MQTT: [] as number[] };
const back = { REST: [] as number[], MQTT: [] as number[] };
for (let i = 0; i < tries; i++) {
  for (const way of ['REST', 'MQTT'] as const) {
    expected = way === 'REST' ? 1 + i : 1001 + i;
    const statusBack = new Promise<void>((resolve) => (playing = resolve));
    // Bounded: a lost command or report fails the run, naming it, rather than hanging it.
    let answered = false;
    const lost = setTimeout(() => {
      process.stderr.write(`${way} try ${i + 1}: nothing back within 10 s (send answered: ${answered}; arrived at the player: ${arrived.has(expected)})\n`);
      process.exit(1);
    }, 10_000);
    const sent = performance.now();
    await sends[way](expected);
    answered = true;
    await statusBack;
    clearTimeout(lost);
    const delivered = arrived.get(expected);
    if (delivered === undefined) throw new Error(`the player played ${expected} before the command arrived`);
    toPlayer[way].push(delivered - sent);
    back[way].push(performance.now() - sent);
    await sleep(PACE_MS);
  }
}

const quantile = (xs: number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};
const line = (name: string, xs: number[]): string =>
  `${name}: p50 ${quantile(xs, 0.5).toFixed(1)} ms, p99 ${quantile(xs, 0.99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.length} tries)`;
process.stdout.write(
  [
    `${config.database.kind}, ${os.cpus().length} CPUs (shared); card-play / card/start, the two ways taking turns`,
    line('REST command -> player stream', toPlayer.REST),
    line('MQTT card/start -> player stream', toPlayer.MQTT),
    line('REST command -> playing, on the parent stream', back.REST),
    line('MQTT card/start -> playing, on data/events', back.MQTT),
  ].join('\n') + '\n',
);

closing = true;
await mqttApp.endAsync();
playerStream.destroy();
parentStream.destroy();
await app.close();
await rm(dataDir, { recursive: true, force: true });
