/**
 * Live events (issue 21), measured: `npx tsx bench/events.ts [--streams 5000] [--rate 200]
 * [--seconds 10] [--idle-streams 1000] [--store sqlite|postgres] [--built]`.
 *
 * 1. Open streams on one instance: the server's RSS before and after, per stream; heartbeats
 *    (every 2 s here) on time on a sample of streams.
 * 2. Two instances on one PostgreSQL: group renames on A at `--rate` a second; for each, the time
 *    from A's answer to the event on a stream of B (matched by the entity tag, which the answer
 *    and the event share): p50, p99.
 * 3. Reads (GET /card/family/library, 304 revalidations) and writes (PUT of a group) per second
 *    with `--idle-streams` streams open against none, on one instance. The streams are read by
 *    a process of their own (bench/event-streams-client.ts). `--idle-families N`: they follow N
 *    families, two members each, one of them the written family (1, the default: every stream
 *    follows it, so every write is an event to each).
 *
 * PostgreSQL parts need BENCH_DATABASE_URL (an admin URL; a database is made and dropped).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadOrCreateSigningKey, mintToken } from '../src/auth/local-issuer.js';
import type { Options } from './options.js';
import { cpuTicks, TICKS_PER_SECOND } from './process-sampler.js';
import { freePort, startServer, type Server } from './server.js';

const { values: args } = parseArgs({
  options: {
    streams: { type: 'string', default: '5000' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    'idle-streams': { type: 'string', default: '1000' },
    'idle-families': { type: 'string', default: '1' },
    store: { type: 'string', default: 'postgres' },
    // The servers from the build (dist/, as `npm start` runs them) instead of the sources via tsx.
    built: { type: 'boolean', default: false },
  },
});
const STREAMS = Number(args.streams);
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const IDLE_STREAMS = Number(args['idle-streams']);
const IDLE_FAMILIES = Number(args['idle-families']);
const adminUrl = process.env.BENCH_DATABASE_URL;
const usePostgres = args.store === 'postgres';
if (usePostgres && !adminUrl) throw new Error('--store postgres needs BENCH_DATABASE_URL');

const serverOpts = { built: args.built, workers: 1 } as Options;
const dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-bench-events-'));
const keyFile = path.join(dir, 'signing-key.json');
const key = await loadOrCreateSigningKey(keyFile);
const token = (sub: string, scope = 'user:content:manage family:library:manage family:library:view'): Promise<string> =>
  mintToken(key, { sub, scope, expiresIn: '2h', issuer: 'urn:cardshelf:local', audience: 'cardshelf' });

const dbName = `bench_events_${randomUUID().slice(0, 8)}`;
async function admin(sqlText: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sqlText);
  } finally {
    await client.end();
  }
}
function databaseUrl(): string {
  const url = new URL(adminUrl!);
  url.pathname = `/${dbName}`;
  return url.toString();
}
if (usePostgres) await admin(`create database "${dbName}"`);

async function start(): Promise<Server> {
  const port = await freePort();
  return startServer(
    serverOpts,
    {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: path.join(dir, 'data'),
      SIGNING_KEY_FILE: keyFile,
      LOG_LEVEL: 'warn',
      EVENTS_HEARTBEAT_SECONDS: '2',
      EVENTS_MAX_STREAMS: '100000',
      EVENTS_MAX_STREAMS_PER_USER: '100000',
      DATABASE_POOL_SIZE: '20',
      ...(usePostgres ? { DATABASE_URL: databaseUrl() } : {}),
    },
    undefined,
  );
}

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) * 1024;
}

interface Stream {
  /** Arrival times of heartbeats (ms). */
  beats: number[];
  close(): void;
}
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

/** Opens a stream; `onEvent` gets each event's parsed data and its arrival time. */
interface EventData {
  tag?: string;
}

function openStream(base: string, bearer: string, onEvent?: (data: EventData, at: number) => void): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}/user/family/events`, { headers: { authorization: `Bearer ${bearer}` }, agent });
    req.once('error', reject);
    req.once('response', (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
      const stream: Stream = { beats: [], close: () => req.destroy() };
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let i: number;
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          if (block === ':') stream.beats.push(at);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data && onEvent) onEvent(JSON.parse(data) as EventData, at);
        }
      });
      res.on('error', () => {});
      resolve(stream);
    });
  });
}

async function call(base: string, method: string, url: string, bearer: string, body?: unknown): Promise<{ status: number; etag: string | null; body: { id?: string } | undefined }> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, etag: res.headers.get('etag'), body: text ? (JSON.parse(text) as { id?: string }) : undefined };
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const adminToken = await token('auth0|bench-operator', 'admin');
/** `families` families of 2 members, each with one group; the first member's token and the group id. */
async function families(base: string, count: number, tag: string): Promise<{ familyId: string; owner: string; member: string; groupId: string }[]> {
  const made = [];
  for (let i = 0; i < count; i++) {
    const familyId = `bench-${tag}-${i}`;
    const [owner, member] = [`auth0|bench-${tag}-${i}-a`, `auth0|bench-${tag}-${i}-b`];
    const put = await call(base, 'PUT', `/admin/families/${familyId}`, adminToken, {
      country: 'US',
      members: [{ userId: owner, approved: true }, { userId: member, approved: true }],
    });
    if (put.status !== 201) throw new Error(`family: ${put.status}`);
    const group = await call(base, 'POST', '/card/family/library/groups', await token(owner), { name: 'g', imageId: 'i' });
    made.push({ familyId, owner, member, groupId: group.body?.id ?? '' });
  }
  return made;
}

/** bench/event-streams-client.ts in a child process: `count` streams open and read; `stop` closes them and answers the events read. */
async function startStreamsClient(base: string, bearers: string[], count: number): Promise<{ pid: number; stop(): Promise<number> }> {
  const script = fileURLToPath(new URL('./event-streams-client.ts', import.meta.url));
  // The same Node and loader (tsx) as this process.
  const child = spawn(process.execPath, [...process.execArgv, script, base, String(count)], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.end(bearers.join('\n'));
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => (out += chunk));
  await new Promise<void>((resolve, reject) => {
    const look = (): void => {
      if (out.includes('ready\n')) resolve();
    };
    child.stdout.on('data', look);
    child.once('exit', (code) => reject(new Error(`the streams' client exited (${code}) before its streams were open`)));
  });
  return {
    pid: child.pid!,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      return Number(/events (\d+)/.exec(out)?.[1] ?? NaN);
    },
  };
}

const report: string[] = [];
const a = await start();
try {
  // ---- 1. RSS per open stream, heartbeats on time ----
  const fams = await families(a.base, 20, 'rss');
  const tokens = await Promise.all(fams.map((f) => token(f.member)));
  await pause(1000);
  const before = await rssBytes(a.child.pid!);
  const open: Stream[] = [];
  const t0 = performance.now();
  for (let i = 0; i < STREAMS; i += 200) {
    open.push(...(await Promise.all(Array.from({ length: Math.min(200, STREAMS - i) }, (_, j) => openStream(a.base, tokens[(i + j) % tokens.length]!)))));
  }
  const openedMs = performance.now() - t0;
  await pause(6_500);
  const after = await rssBytes(a.child.pid!);
  const gaps = open.slice(0, 500).flatMap((s) => s.beats.slice(1).map((t, k) => t - s.beats[k]!)).sort((x, y) => x - y);
  report.push(
    `1. ${STREAMS} streams opened in ${(openedMs / 1000).toFixed(1)} s; server RSS ${mb(before)} before, ${mb(after)} with them: ` +
      `${((after - before) / STREAMS / 1024).toFixed(1)} KiB per stream; heartbeat gaps (2 s interval, 500 streams) p50 ${percentile(gaps, 50).toFixed(0)} ms, max ${(gaps.at(-1) ?? NaN).toFixed(0)} ms`,
  );
  for (const s of open) s.close();
  await pause(1000);

  // ---- 3. reads and writes per second, with idle streams and without ----
  const rw = await families(a.base, 10, 'rw');
  const readerToken = await token(rw[0]!.member);
  const tagNow = (await call(a.base, 'GET', '/card/family/library', readerToken)).etag!;
  const writer = rw[1]!;
  const writerToken = await token(writer.owner);
  /** CPU seconds of the server, and of the streams' client while it runs. */
  const cpuOf = async (pids: number[]): Promise<number> => (await cpuTicks(pids)) / TICKS_PER_SECOND;
  async function load(client?: number): Promise<{ reads: number; writes: number; serverMsPerWrite: number; clientCores: number }> {
    const reads = await autocannon({
      url: `${a.base}/card/family/library`,
      connections: 16,
      duration: SECONDS,
      headers: { authorization: `Bearer ${readerToken}`, 'if-none-match': tagNow },
    });
    const server = [a.child.pid!];
    const [serverBefore, clientBefore] = [await cpuOf(server), client ? await cpuOf([client]) : 0];
    const writes = await autocannon({
      url: `${a.base}/card/family/library/groups/${writer.groupId}`,
      method: 'PUT',
      connections: 8,
      duration: SECONDS,
      headers: { authorization: `Bearer ${writerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'renamed' }),
    });
    const [serverAfter, clientAfter] = [await cpuOf(server), client ? await cpuOf([client]) : 0];
    return {
      reads: reads.requests.average,
      writes: writes.requests.average,
      serverMsPerWrite: ((serverAfter - serverBefore) * 1000) / Math.max(1, writes.requests.total),
      clientCores: (clientAfter - clientBefore) / SECONDS,
    };
  }
  // A first load warms the server up (its JIT, the database's caches); it is not counted.
  await load();
  const none = await load();
  // The idle streams follow the written family (and `IDLE_FAMILIES - 1` others): a write is an
  // event to each stream of its family. They are read by a process of their own, so that
  // reading them takes nothing from autocannon.
  const others = IDLE_FAMILIES > 1 ? await families(a.base, IDLE_FAMILIES - 1, 'idle') : [];
  const idleTokens = await Promise.all([writer, ...others].flatMap((f) => [token(f.member), token(f.owner)]));
  const streamsClient = await startStreamsClient(a.base, idleTokens, IDLE_STREAMS);
  const withStreams = await load(streamsClient.pid);
  const eventsRead = await streamsClient.stop();
  await pause(1000);
  // Without streams again: a drift of the machine shows as a difference between the two.
  const noneAgain = await load();
  const pct = (x: number, y: number): string => `${((x / y - 1) * 100).toFixed(1)}%`;
  report.push(
    `3. reads/s (304 revalidations, 16 connections) ${none.reads.toFixed(0)} without streams, ${withStreams.reads.toFixed(0)} with ${IDLE_STREAMS} ` +
      `(${pct(withStreams.reads, none.reads)}), ${noneAgain.reads.toFixed(0)} without again; writes/s (group PUT, 8 connections, each an event to the ${Math.ceil(IDLE_STREAMS / IDLE_FAMILIES)} streams of its family) ` +
      `${none.writes.toFixed(0)} without, ${withStreams.writes.toFixed(0)} with (${pct(withStreams.writes, none.writes)}), ${noneAgain.writes.toFixed(0)} without again; ` +
      `${eventsRead} events read by the streams' process; server CPU a write ${none.serverMsPerWrite.toFixed(2)} ms without streams, ` +
      `${withStreams.serverMsPerWrite.toFixed(2)} ms with them; the streams' process used ${withStreams.clientCores.toFixed(2)} cores of the machine's 2 meanwhile`,
  );

  // ---- 2. cross-instance latency (PostgreSQL) ----
  if (usePostgres) {
    const b = await start();
    try {
      const lat = await families(a.base, 20, 'lat');
      const arrivals = new Map<string, number>();
      const streamsOnB = await Promise.all(lat.map(async (f) => openStream(b.base, await token(f.member), (data, at) => {
        if (data.tag) arrivals.set(data.tag, at);
      })));
      const ownerTokens = await Promise.all(lat.map((f) => token(f.owner)));
      const answered = new Map<string, number>();
      const total = RATE * SECONDS;
      const startAt = performance.now();
      const pending: Promise<void>[] = [];
      for (let i = 0; i < total; i++) {
        const due = startAt + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await pause(wait);
        const f = lat[i % lat.length]!;
        pending.push(
          call(a.base, 'PUT', `/card/family/library/groups/${f.groupId}`, ownerTokens[i % lat.length]!, { name: `n${i}` }).then((r) => {
            if (r.etag) answered.set(r.etag, performance.now());
          }),
        );
      }
      await Promise.all(pending);
      await pause(2000);
      const delays = [...answered].map(([tag, at]) => (arrivals.get(tag) ?? Infinity) - at).sort((x, y) => x - y);
      const missing = delays.filter((d) => d === Infinity).length;
      const achieved = total / ((performance.now() - 2000 - startAt) / 1000);
      report.push(
        `2. ${total} writes on A (target ${RATE}/s, achieved ${achieved.toFixed(0)}/s), events on B: from A's answer to B's event p50 ${percentile(delays, 50).toFixed(1)} ms, ` +
          `p99 ${percentile(delays, 99).toFixed(1)} ms, max ${delays.filter((d) => d !== Infinity).at(-1)?.toFixed(1)} ms; ${missing} not received ` +
          `(negative: the event came before the answer)`,
      );
      for (const s of streamsOnB) s.close();
    } finally {
      await b.stop();
    }
  }
} finally {
  await a.stop();
  if (usePostgres) await admin(`drop database if exists "${dbName}" with (force)`);
  await rm(dir, { recursive: true, force: true });
}
console.log(`live events, ${args.store}, ${new Date().toISOString()}`);
for (const line of report) console.log(line);
