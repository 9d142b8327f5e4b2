/**
 * `npx tsx bench/player-commands.ts [--tries 20]`: how long a command takes to reach a
 * registered player (issue 22), and how long until the player's status comes back.
 *   - command -> player's stream: from sending `POST /device-v2/{id}/command` to the
 *     `player.command` event arriving on the player's `GET /user/family/events`;
 *   - round trip: from sending the command to the `player.status` event the player's report
 *     (sent as soon as the command arrives) puts on the parent's stream.
 * One app in this process, listening on loopback, on SQLite in a new directory (or the
 * PostgreSQL database of DATABASE_URL). The browser's own time to start audio is not in it.
 * Prints p50, p99 and max in milliseconds.
 */
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadOrCreateSigningKey, mintToken } from '../src/auth/local-issuer.js';
import { loadConfig } from '../src/config.js';

const { values } = parseArgs({ options: { tries: { type: 'string', default: '20' } } });
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
  command?: { volume?: number };
  status?: { userVolumePercentage: number };
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

const { device, credential } = await call<{ device: { deviceId: string }; credential: { accessToken: string } }>('POST', '/device-v2/devices/mine', parent, {
  name: 'Kitchen',
});
const player = credential.accessToken;
await call('PUT', `/device-v2/${device.deviceId}/status`, player, { playbackStatus: 'stopped', userVolumePercentage: 50 });

/** When each command arrived on the player's stream (it may arrive before the command's answer). */
const arrived = new Map<string, number>();
// The player: reports its new volume as soon as a command arrives, as the browser player does.
const playerStream = await listen(player, (kind, data) => {
  if (kind !== 'player.command') return;
  if (data.ids.commandId) arrived.set(data.ids.commandId, performance.now());
  void call('PUT', `/device-v2/${device.deviceId}/status`, player, { playbackStatus: 'playing', userVolumePercentage: data.command?.volume });
});
let expectedVolume = -1;
let roundTrip: (() => void) | undefined;
const parentStream = await listen(parent, (kind, data) => {
  if (kind === 'player.status' && data.status?.userVolumePercentage === expectedVolume) roundTrip?.();
});

const toPlayer: number[] = [];
const back: number[] = [];
for (let i = 0; i < tries; i++) {
  expectedVolume = i % 2 === 0 ? 30 + i : 70 - i;
  const statusBack = new Promise<void>((resolve) => (roundTrip = resolve));
  const sent = performance.now();
  const { commandId } = await call<{ commandId: string }>('POST', `/device-v2/${device.deviceId}/command`, parent, { command: 'volume', volume: expectedVolume });
  await statusBack;
  const delivered = arrived.get(commandId);
  if (delivered === undefined) throw new Error(`the status came back before command ${commandId} arrived`);
  toPlayer.push(delivered - sent);
  back.push(performance.now() - sent);
}

const quantile = (xs: number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};
const line = (name: string, xs: number[]): string =>
  `${name}: p50 ${quantile(xs, 0.5).toFixed(1)} ms, p99 ${quantile(xs, 0.99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.length} tries)`;
process.stdout.write(`${config.database.kind}, ${os.cpus().length} CPUs (shared)\n${line('command -> player stream', toPlayer)}\n${line('command -> status back on the parent stream', back)}\n`);

playerStream.destroy();
parentStream.destroy();
await app.close();
await rm(dataDir, { recursive: true, force: true });
