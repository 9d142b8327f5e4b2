/**
 * `npm run bench`: Cardshelf under load, against the fastest Node.js can answer the same
 * exchange. For each store (SQLite always, PostgreSQL when DATABASE_URL is set) it seeds a
 * database (`cardshelf seed --scale N`), starts the real server as a child process, creates its
 * fixtures through the API, and then for every scenario:
 *   1. captures the real response (status, headers, body);
 *   2. measures the ceiling: a bare node:http child serving those bytes from memory, under the
 *      same load (connections, duration, pipelining, the same requests);
 *   3. measures Cardshelf.
 * It prints requests/s, p50 and p99 latency and the ratio to the ceiling, writes
 * bench/results/<time>-<store>.json and adds the run to the table in bench/RESULTS.md.
 *
 * The machine is shared and noisy: compare ratios from one run, not absolute figures across runs.
 * `--smoke` (or BENCH_SMOKE=1) is a functional check of the harness (about a second a scenario,
 * nothing recorded): it fails only when a request fails, never on a timing.
 *
 * Options (flag, or environment variable): see USAGE below.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import { loadOrCreateSigningKey, mintToken, type SigningKey } from '../src/auth/local-issuer.js';
import { loadConfig, type Config } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import { formatSummary, summariseFiles, type Summary } from './profile-summary.js';

const USAGE = `usage: npm run bench -- [options]

  --duration S       seconds measured per scenario and target   (BENCH_DURATION, default 10)
  --warmup S         seconds of load before each measurement    (BENCH_WARMUP, default 3)
  --connections N    concurrent connections                     (BENCH_CONNECTIONS, default 32)
  --pipelining N     requests in flight per connection          (BENCH_PIPELINING, default 1)
  --scale N          users seeded (about 50 cards each)         (BENCH_SCALE, default 20: ~1,000 cards)
  --workers N        cardshelf serve --workers N                (BENCH_WORKERS, default 1)
  --store S          sqlite, postgres or all (postgres needs DATABASE_URL; default: all that apply)
  --scenarios A,B    only these scenarios (names as printed)
  --data-dir DIR     use (and keep) this SQLite data directory; seeds it only when it has no database
  --log-level L      the server's LOG_LEVEL                     (BENCH_LOG_LEVEL, default warn)
  --built            run bin/cardshelf.js (dist/) instead of the TypeScript sources
  --cpu-prof         profile the server (node --cpu-prof) and print where the time went
  --label TEXT       a note for the results table
  --no-record        do not write bench/results or bench/RESULTS.md
  --smoke            a short functional run (BENCH_SMOKE=1): ~1 s a scenario, scale 2, nothing recorded
`;

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const RESULTS_DIR = path.join(here, 'results');
const RESULTS_MD = path.join(here, 'RESULTS.md');
const USER_SCOPES = 'user:content:manage family:library:manage';

// ---------------------------------------------------------------------------------------------
// Options

interface Options {
  duration: number;
  warmup: number;
  connections: number;
  pipelining: number;
  scale: number;
  workers: number;
  stores: ('sqlite' | 'postgres')[];
  scenarios: string[] | undefined;
  dataDir: string | undefined;
  logLevel: string;
  built: boolean;
  cpuProf: boolean;
  label: string;
  record: boolean;
  smoke: boolean;
}

function readOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      pipelining: { type: 'string' },
      scale: { type: 'string' },
      workers: { type: 'string' },
      store: { type: 'string' },
      scenarios: { type: 'string' },
      'data-dir': { type: 'string' },
      'log-level': { type: 'string' },
      built: { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      label: { type: 'string', default: '' },
      'no-record': { type: 'boolean', default: false },
      smoke: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const env = process.env;
  const smoke = values.smoke || env.BENCH_SMOKE === '1';
  const num = (flag: string | undefined, envValue: string | undefined, fallback: number, name: string): number => {
    const text = flag ?? envValue;
    if (text === undefined || text === '') return fallback;
    const n = Number(text);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not '${text}'`);
    return n;
  };
  const storeFlag = values.store ?? 'all';
  if (!['sqlite', 'postgres', 'all'].includes(storeFlag)) throw new Error(`--store is sqlite, postgres or all`);
  if (storeFlag === 'postgres' && !env.DATABASE_URL) throw new Error('--store postgres needs DATABASE_URL');
  const stores: Options['stores'] =
    storeFlag === 'all' ? (env.DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite']) : [storeFlag as 'sqlite' | 'postgres'];
  return {
    duration: num(values.duration, env.BENCH_DURATION, smoke ? 1 : 10, 'duration'),
    warmup: smoke ? 0 : num(values.warmup, env.BENCH_WARMUP, 3, 'warmup'),
    connections: Math.round(num(values.connections, env.BENCH_CONNECTIONS, 32, 'connections')),
    pipelining: Math.round(num(values.pipelining, env.BENCH_PIPELINING, 1, 'pipelining')),
    scale: Math.round(num(values.scale, env.BENCH_SCALE, smoke ? 2 : 20, 'scale')),
    workers: Math.round(num(values.workers, env.BENCH_WORKERS, 1, 'workers')),
    stores,
    scenarios: values.scenarios?.split(',').map((s) => s.trim()).filter(Boolean),
    dataDir: values['data-dir'] ? path.resolve(values['data-dir']) : undefined,
    logLevel: values['log-level'] ?? env.BENCH_LOG_LEVEL ?? 'warn',
    built: values.built,
    cpuProf: values['cpu-prof'],
    label: values.label,
    record: !smoke && !values['no-record'],
    smoke,
  };
}

// ---------------------------------------------------------------------------------------------
// Processes

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** `node [--import tsx] <cardshelf> ...args`: the sources through tsx, or the build. */
function cardshelfCommand(opts: Options, nodeFlags: string[], args: string[]): string[] {
  return opts.built
    ? [...nodeFlags, path.join(root, 'bin/cardshelf.js'), ...args]
    : ['--import', 'tsx', ...nodeFlags, path.join(root, 'src', 'main.ts'), ...args];
}

/** Runs the cardshelf command to its end; its stderr (progress) goes to ours. */
async function runCardshelf(opts: Options, env: NodeJS.ProcessEnv, args: string[]): Promise<number> {
  const child = spawn(process.execPath, cardshelfCommand(opts, [], args), {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code ?? 1;
}

interface Server {
  child: ChildProcess;
  /** Where the profiler hook writes (with --cpu-prof). */
  profileDir: string | undefined;
  base: string;
  port: number;
  stderr: string[];
  stop(): Promise<void>;
}

async function startServer(opts: Options, env: NodeJS.ProcessEnv, profileDir: string | undefined): Promise<Server> {
  const port = Number(env.PORT);
  // The hook is TypeScript: with the build, tsx is loaded for it alone.
  const hook = ['--import', path.join(here, 'profiler-hook.ts')];
  const nodeFlags = profileDir ? (opts.built ? ['--import', 'tsx', ...hook] : hook) : [];
  const args = ['serve', ...(opts.workers > 1 ? ['--workers', String(opts.workers)] : [])];
  const child = spawn(process.execPath, cardshelfCommand(opts, nodeFlags, args), {
    cwd: root,
    env: profileDir ? { ...env, BENCH_PROFILE_DIR: profileDir } : env,
    // The server's log lines are written as in production (a pipe costs what a log shipper
    // would), and dropped.
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr.push(chunk);
    if (stderr.length > 200) stderr.shift();
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`the server exited while starting:\n${stderr.join('')}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the server did not answer within 60 s:\n${stderr.join('')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    profileDir,
    base,
    port,
    stderr,
    async stop() {
      if (exited) return;
      const done = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await done;
      clearTimeout(timer);
    },
  };
}

interface Ceiling {
  port: number;
  pid: number;
  serve(captured: Captured): Promise<void>;
  stop(): Promise<void>;
}

async function startCeiling(): Promise<Ceiling> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'ceiling-server.ts')], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [first] = (await once(child, 'message')) as [{ port: number }];
  return {
    port: first.port,
    pid: child.pid as number,
    async serve(captured) {
      const ready = once(child, 'message');
      child.send({ status: captured.status, headers: captured.headers, body: captured.body.toString('base64') });
      await ready;
    },
    async stop() {
      const done = once(child, 'exit');
      child.disconnect();
      await done;
    },
  };
}

/** A process and its descendants (cluster workers), from /proc. */
async function processTree(pid: number): Promise<number[]> {
  const pids = [pid];
  try {
    const parents = new Map<number, number>();
    for (const d of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
      try {
        const s = await readFile(`/proc/${d}/stat`, 'utf8');
        // The command name is in parentheses and may hold spaces: the fields start after ')'.
        parents.set(Number(d), Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        // the process ended meanwhile
      }
    }
    for (let i = 0; i < pids.length; i++) {
      for (const [child, parent] of parents) if (parent === pids[i]) pids.push(child);
    }
  } catch {
    // no /proc: only the process itself
  }
  return pids;
}

/** Resident memory of a process and its descendants, in MB: now, and the peak of each summed. */
async function memoryOf(pid: number): Promise<{ rssMB: number; peakMB: number }> {
  let rss = 0;
  let peak = 0;
  for (const p of await processTree(pid)) {
    try {
      const status = await readFile(`/proc/${p}/status`, 'utf8');
      rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak += Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return { rssMB: Math.round(rss / 1024), peakMB: Math.round(peak / 1024) };
}

/** Clock ticks of CPU (user + system) used by these processes so far. */
async function cpuTicks(pids: number[]): Promise<number> {
  let ticks = 0;
  for (const p of pids) {
    try {
      const s = await readFile(`/proc/${p}/stat`, 'utf8');
      const fields = s.slice(s.lastIndexOf(')') + 2).split(' ');
      // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command name.
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone, or no /proc
    }
  }
  return ticks;
}

/** Busy clock ticks of the whole machine so far (all cores). */
async function machineBusyTicks(): Promise<number> {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
    const [, ...values] = line.trim().split(/\s+/);
    const n = values.map(Number);
    const total = n.reduce((a, b) => a + b, 0);
    // idle and iowait are the 4th and 5th values.
    return total - (n[3] ?? 0) - (n[4] ?? 0);
  } catch {
    return 0;
  }
}

/** Clock ticks a second (USER_HZ): 100 on every Linux this runs on. */
const TICKS_PER_SECOND = 100;

// ---------------------------------------------------------------------------------------------
// HTTP helpers

interface Captured {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** One exchange with exact bytes: what the ceiling will replay. */
function exchange(base: string, method: string, urlPath: string, headers: Record<string, string>, body?: string): Promise<Captured> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${urlPath}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const kept: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) {
          // Hop-by-hop and per-response headers are the ceiling server's own to write.
          if (['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(k)) continue;
          if (v !== undefined) kept[k] = Array.isArray(v) ? v.join(', ') : v;
        }
        resolve({ status: res.statusCode ?? 0, headers: kept, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function api(base: string, method: string, urlPath: string, token: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${base}${urlPath}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function expectStatus(
  p: Promise<{ status: number; json: any }>,
  statuses: number[],
  what: string,
): Promise<any> {
  const r = await p;
  if (!statuses.includes(r.status)) throw new Error(`fixture: ${what} answered ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

/** Runs `fn` over `items`, `width` at a time. */
async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Fixtures: made through the API, with ids of their own, so they sit beside any seeded data set.

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const randomCardId = (): string => Array.from(randomBytes(5), (b) => ALNUM[b % 62]).join('');

function cardBody(title: string, chapters: number, tracks: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title,
    ...extra,
    metadata: { author: 'Bench', category: 'stories', description: 'A card of the benchmark fixtures.' },
    content: {
      activity: 'service_Player',
      version: '1',
      config: { autoadvance: 'next', onlineOnly: false },
      chapters: Array.from({ length: chapters }, (_, c) => ({
        key: String(c + 1).padStart(2, '0'),
        title: `Chapter ${c + 1}`,
        overlayLabel: String(c + 1),
        display: { icon16x16: 'service:#icon-star' },
        tracks: Array.from({ length: tracks }, (_, t) => ({
          key: String(t + 1).padStart(2, '0'),
          title: `Chapter ${c + 1}, part ${t + 1}`,
          trackUrl: `service:#${randomBytes(8).toString('hex')}`,
          type: 'audio',
          format: 'aac',
          duration: 240,
          fileSize: 3_000_000,
          display: { icon16x16: 'service:#icon-moon' },
        })),
      })),
    },
  };
}

interface Fixtures {
  key: SigningKey;
  auth: { issuer: string; audience: string };
  list50: string;
  list1000: string;
  bigCardId: string;
  libraryCardId: string;
  groupId: string;
  groupBody: unknown;
  wishlistId: string;
  wishlistBody: unknown;
  /** Entity tags of the list of 1,000 cards and of the family library (issue 12: the 304s). */
  list1000Tag: string;
  libraryTag: string;
  /** Tokens of users with no wishlists, for the wishlist creates (10 each at most). */
  freshUsers: string[];
  runTag: string;
  mint(sub: string, scope?: string): Promise<string>;
}

async function makeFixtures(base: string, config: Readonly<Config>): Promise<Fixtures> {
  if (config.auth.mode !== 'local') throw new Error('the benchmark signs its tokens with the local issuer');
  const key = await loadOrCreateSigningKey(config.auth.keyFile);
  const auth = { issuer: config.auth.issuer, audience: config.auth.audience };
  const mint = (sub: string, scope = USER_SCOPES): Promise<string> =>
    mintToken(key, { sub, scope, expiresIn: '6h', ...auth });
  const runTag = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const user = (name: string): string => `auth0|bench-${runTag}-${name}`;
  const admin = await mint('auth0|bench-admin', 'admin');
  const u50 = user('list50');
  const u1000 = user('list1000');
  const [t50, t1000] = await Promise.all([mint(u50), mint(u1000)]);

  // 20 free catalogue cards of 3 chapters of 3 tracks: the family library and the group.
  const catalogue: string[] = [];
  while (catalogue.length < 20) {
    const cardId = randomCardId();
    const r = await api(base, 'PUT', `/admin/cards/${cardId}`, admin, {
      ...cardBody(`Bench catalogue ${catalogue.length + 1}`, 3, 3),
      userId: 'cardshelf|catalogue',
      availability: 'free',
    });
    // 200 would be an existing catalogue card, 400 a MYO card: draw another id.
    if (r.status === 201) catalogue.push(cardId);
    else if (r.status !== 200 && r.status !== 400) throw new Error(`fixture: admin card ${r.status}`);
  }

  // The lists: 3 chapters of 2 tracks a card (the list form drops them), plus the big card.
  const big = await expectStatus(api(base, 'POST', '/content', t50, cardBody('Bench big card', 10, 5)), [201], 'big card');
  const bigCardId = big.card.cardId as string;
  const make = (token: string, n: number, from: number): Promise<void> =>
    inParallel(
      Array.from({ length: n }, (_, i) => i + from),
      8,
      async (i) => {
        await expectStatus(api(base, 'POST', '/content', token, cardBody(`Bench card ${String(i).padStart(4, '0')}`, 3, 2)), [201], 'card');
      },
    );
  await make(t50, 49, 1);
  await make(t1000, 1000, 1);

  await expectStatus(
    api(base, 'PUT', `/admin/families/bench-${runTag}`, admin, {
      country: 'GB',
      flags: { sharingOn: true },
      members: [
        { userId: u50, approved: true, verified: true, verifiedEmail: 'bench@example.com' },
        { userId: user('partner'), approved: true, verified: false },
      ],
      devices: [{ deviceId: `bench-${runTag}-kitchen` }, { deviceId: `bench-${runTag}-bedroom` }],
    }),
    [201],
    'family',
  );
  for (const cardId of catalogue) {
    await expectStatus(api(base, 'POST', '/card/family/library', t50, { cardId }), [201], 'library add');
  }
  const groupBody = { name: 'Bench group', imageId: 'moon', items: catalogue.map((contentId) => ({ contentId })) };
  const group = await expectStatus(api(base, 'POST', '/card/family/library/groups', t50, groupBody), [201], 'group');
  if (group.items.length !== 20 || group.cards.length !== 20) throw new Error('fixture: the group lost items');

  const wishlistBody = {
    content: catalogue.slice(0, 10).map((item, i) => ({ item, ...(i % 3 === 0 ? { note: 'for the birthday' } : {}) })),
  };
  const wishlist = await expectStatus(api(base, 'POST', '/wishlists', t50, wishlistBody), [201], 'wishlist');
  const tagOf = async (token: string, urlPath: string): Promise<string> => {
    const r = await exchange(base, 'GET', urlPath, { authorization: `Bearer ${token}` });
    const tag = r.headers.etag;
    if (r.status !== 200 || !tag) throw new Error(`fixture: ${urlPath} answered ${r.status} without an ETag`);
    return tag;
  };

  return {
    key,
    auth,
    list50: t50,
    list1000: t1000,
    bigCardId,
    libraryCardId: catalogue[0] as string,
    groupId: group.id as string,
    groupBody,
    wishlistId: wishlist.wishlistId as string,
    wishlistBody,
    list1000Tag: await tagOf(t1000, '/content/mine'),
    libraryTag: await tagOf(t50, '/card/family/library'),
    freshUsers: [],
    runTag,
    mint,
  };
}

// ---------------------------------------------------------------------------------------------
// Scenarios

interface Scenario {
  name: string;
  kind: 'read' | 'write';
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  /** The path as a route, for the tables (ids as placeholders). */
  route?: string;
  /** The target of the issue: a share of the ceiling's requests/s, or requests/s. */
  target: { ratio?: number; rps?: number; p99Ms?: number };
  token: string;
  body?: string;
  /** Gives each request its own token (wishlist creates): one user makes at most 10. */
  perRequestToken?: () => string;
  /** More request headers (If-None-Match, Idempotency-Key). */
  headers?: Record<string, string>;
  /** The one status every answer must have, when it is not a 2xx (a 304). */
  status?: number;
  note?: string;
}

const WISHLISTS_PER_USER = 10;

function scenarios(f: Fixtures): Scenario[] {
  return [
    { name: 'list-50', kind: 'read', method: 'GET', path: '/content/mine', target: { ratio: 0.5, p99Ms: 10 }, token: f.list50 },
    { name: 'list-1000', kind: 'read', method: 'GET', path: '/content/mine', target: { ratio: 0.35 }, token: f.list1000 },
    { name: 'card-10x5', kind: 'read', method: 'GET', path: `/content/${f.bigCardId}`, route: '/content/{cardId}', target: { ratio: 0.35 }, token: f.list50 },
    { name: 'family', kind: 'read', method: 'GET', path: '/user/family', target: { ratio: 0.35 }, token: f.list50 },
    {
      name: 'library-add-200',
      kind: 'write',
      method: 'POST',
      path: '/card/family/library',
      target: { rps: 3000 },
      token: f.list50,
      body: JSON.stringify({ cardId: f.libraryCardId }),
    },
    { name: 'group-get', kind: 'read', method: 'GET', path: `/card/family/library/groups/${f.groupId}`, route: '/card/family/library/groups/{groupId}', target: { ratio: 0.35 }, token: f.list50 },
    {
      name: 'group-put',
      kind: 'write',
      method: 'PUT',
      path: `/card/family/library/groups/${f.groupId}`,
      route: '/card/family/library/groups/{groupId}',
      target: { rps: 3000 },
      token: f.list50,
      body: JSON.stringify(f.groupBody),
    },
    {
      name: 'wishlist-post',
      kind: 'write',
      method: 'POST',
      path: '/wishlists',
      target: { rps: 3000 },
      token: f.list50,
      body: JSON.stringify(f.wishlistBody),
      note: `each request by the next of many fresh users, ${WISHLISTS_PER_USER} creates a user (the limit), so every create is a 201`,
    },
    {
      name: 'wishlist-put',
      kind: 'write',
      method: 'PUT',
      path: `/wishlists/${f.wishlistId}`,
      route: '/wishlists/{wishlistId}',
      target: { rps: 3000 },
      token: f.list50,
      body: JSON.stringify(f.wishlistBody),
    },
    // Issue 12: a poll that finds nothing changed, beside the 200 it replaces; a retried create.
    {
      name: 'list-1000-304',
      kind: 'read',
      method: 'GET',
      path: '/content/mine',
      target: {},
      token: f.list1000,
      headers: { 'if-none-match': f.list1000Tag },
      status: 304,
      note: 'If-None-Match with the current tag: compare its CPU µs/req with list-1000',
    },
    { name: 'library', kind: 'read', method: 'GET', path: '/card/family/library', target: {}, token: f.list50, note: 'the family library: 20 catalogue cards and 50 MYO cards' },
    {
      name: 'library-304',
      kind: 'read',
      method: 'GET',
      path: '/card/family/library',
      target: {},
      token: f.list50,
      headers: { 'if-none-match': f.libraryTag },
      status: 304,
      note: 'If-None-Match with the current tag: compare its CPU µs/req with library',
    },
    {
      name: 'wishlist-post-replay',
      kind: 'write',
      method: 'POST',
      path: '/wishlists',
      target: {},
      token: f.list50,
      body: JSON.stringify(f.wishlistBody),
      headers: { 'idempotency-key': `bench-${f.runTag}` },
      note: 'one Idempotency-Key: the first request creates, every later one replays (201, Idempotent-Replayed); compare with wishlist-post',
    },
  ];
}

function requestHeaders(s: Scenario, token: string): Record<string, string> {
  return {
    accept: 'application/json',
    authorization: `Bearer ${token}`,
    ...(s.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...s.headers,
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring

interface Measured {
  rps: number;
  /** CPU time of the server (or ceiling) process(es) per request, in microseconds. */
  cpuUsPerRequest: number;
  /**
   * Cores' worth of CPU used meanwhile by processes outside this run (other engineers' tests on
   * a shared machine): the noise of the figure. 0 on an otherwise idle machine.
   */
  otherCores: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mbPerSec: number;
}

/** The processes a measurement accounts for: the target server's and the load generator's. */
interface Watched {
  target: number[];
  others: number[];
}

async function measure(
  opts: Options,
  port: number,
  s: Scenario,
  seconds: number,
  watched: Watched,
  tokenFor?: () => string,
): Promise<Measured> {
  const request: autocannon.Request = {
    method: s.method,
    path: s.path,
    headers: requestHeaders(s, s.token),
    ...(s.body === undefined ? {} : { body: s.body }),
  };
  if (tokenFor) {
    request.setupRequest = (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${tokenFor()}` } });
  }
  const t0 = performance.now();
  const [target0, own0, busy0] = await Promise.all([cpuTicks(watched.target), cpuTicks(watched.others), machineBusyTicks()]);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: opts.connections,
    pipelining: opts.pipelining,
    duration: seconds,
    requests: [request],
  });
  const [target1, own1, busy1] = await Promise.all([cpuTicks(watched.target), cpuTicks(watched.others), machineBusyTicks()]);
  const wall = (performance.now() - t0) / 1000;
  const elapsed = Math.max(0.001, (Number(result.finish) - Number(result.start)) / 1000);
  const targetTicks = target1 - target0;
  const otherTicks = busy1 - busy0 - targetTicks - (own1 - own0);
  return {
    rps: Math.round(result.requests.total / elapsed),
    cpuUsPerRequest: result.requests.total > 0 ? Math.round(((targetTicks / TICKS_PER_SECOND) * 1e6) / result.requests.total) : 0,
    otherCores: Math.max(0, Math.round((otherTicks / TICKS_PER_SECOND / wall) * 100) / 100),
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
    // A 304 scenario's answers are all 304s: any other status is the failure.
    non2xx: s.status === undefined ? result.non2xx : result.requests.total - (result.statusCodeStats?.[`${s.status}`]?.count ?? 0),
    errors: result.errors,
    timeouts: result.timeouts,
    mbPerSec: Math.round((result.throughput.average / 1048576) * 10) / 10,
  };
}

interface ScenarioResult {
  name: string;
  kind: Scenario['kind'];
  request: string;
  status: number;
  responseBytes: number;
  note?: string;
  ceiling: Measured;
  cardshelf: Measured;
  /** Cardshelf's requests/s over the ceiling's. */
  ratio: number;
  target: Scenario['target'];
  targetMet: boolean;
  rssMB: number;
  /** With --cpu-prof: the server's profile over the measured load. */
  profile?: Summary;
}

function targetMet(s: Scenario, c: Measured, ratio: number): boolean {
  if (s.target.ratio !== undefined && ratio < s.target.ratio) return false;
  if (s.target.p99Ms !== undefined && c.p99 >= s.target.p99Ms) return false;
  if (s.target.rps !== undefined && c.rps < s.target.rps) return false;
  return true;
}

async function runScenario(
  opts: Options,
  server: Server,
  ceiling: Ceiling,
  f: Fixtures,
  s: Scenario,
): Promise<ScenarioResult> {
  let tokenFor: (() => string) | undefined;
  let creates = 0;
  if (s.name === 'wishlist-post') {
    // Users are minted ahead, as many as the creates may need (see below); the counter runs on
    // through warm-up and measurement, so no user ever reaches the limit.
    tokenFor = () => {
      const token = f.freshUsers[Math.floor(creates / WISHLISTS_PER_USER) % f.freshUsers.length] as string;
      creates++;
      return token;
    };
    await mintFreshUsers(f, 2000);
  }

  const firstToken = tokenFor ? tokenFor() : s.token;
  const captured = await exchange(server.base, s.method, s.path, requestHeaders(s, firstToken), s.body);
  if (s.status !== undefined ? captured.status !== s.status : captured.status < 200 || captured.status > 299) {
    throw new Error(`${s.name}: the server answered ${captured.status}: ${captured.body.toString('utf8').slice(0, 300)}`);
  }
  if (s.name === 'library-add-200' && captured.status !== 200) throw new Error(`${s.name}: expected 200, got ${captured.status}`);

  const serverPids = await processTree(server.child.pid as number);
  const ceilingWatch: Watched = { target: [ceiling.pid], others: [process.pid, ...serverPids] };
  const serverWatch: Watched = { target: serverPids, others: [process.pid, ceiling.pid] };
  await ceiling.serve(captured);
  // The ceiling serves the same requests: with per-request tokens too (that costs the load
  // generator the same), cycling over the users minted so far.
  const ceilingTokens = tokenFor ? cycling(f.freshUsers) : undefined;
  if (opts.warmup > 0) await measure(opts, ceiling.port, s, opts.warmup, ceilingWatch, ceilingTokens);
  const ceil = await measure(opts, ceiling.port, s, opts.duration, ceilingWatch, ceilingTokens);

  if (tokenFor) {
    // Cardshelf cannot create faster than the ceiling answers: its count, with a margin, bounds
    // the creates, and so the users needed.
    const bound = Math.ceil(((ceil.rps * (opts.warmup + opts.duration)) / WISHLISTS_PER_USER) * 1.5) + 50;
    await mintFreshUsers(f, bound + Math.ceil(creates / WISHLISTS_PER_USER));
  }
  if (opts.warmup > 0) await measure(opts, server.port, s, opts.warmup, serverWatch, tokenFor);
  const profiling = server.profileDir ? await startProfiles(serverPids, server.profileDir) : undefined;
  const mine = await measure(opts, server.port, s, opts.duration, serverWatch, tokenFor);
  const profile = profiling ? await profiling.stop() : undefined;
  if (tokenFor && creates > f.freshUsers.length * WISHLISTS_PER_USER) {
    mine.non2xx = Math.max(mine.non2xx, 1);
    log(`${s.name}: more creates than minted users could make; some were refused`);
  }
  const ratio = ceil.rps > 0 ? mine.rps / ceil.rps : 0;
  const { rssMB } = await memoryOf(server.child.pid as number);
  return {
    name: s.name,
    kind: s.kind,
    request: `${s.method} ${s.route ?? s.path}`,
    status: captured.status,
    responseBytes: captured.body.length,
    ...(s.note ? { note: s.note } : {}),
    ceiling: ceil,
    cardshelf: mine,
    ratio: Math.round(ratio * 1000) / 1000,
    target: s.target,
    targetMet: targetMet(s, mine, ratio),
    rssMB,
    ...(profile ? { profile } : {}),
  };
}

/** Starts the profiler hook in every server process; stop() collects and summarises. */
async function startProfiles(pids: number[], dir: string): Promise<{ stop(): Promise<Summary> }> {
  const before = new Set(await readdir(dir));
  for (const pid of pids) process.kill(pid, 'SIGUSR2');
  return {
    async stop() {
      for (const pid of pids) process.kill(pid, 'SIGUSR2');
      const deadline = Date.now() + 30_000;
      for (;;) {
        const fresh = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
        if (fresh.length >= pids.length || Date.now() > deadline) {
          return summariseFiles(fresh.map((f) => path.join(dir, f)), 25);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    },
  };
}

function cycling(tokens: string[]): () => string {
  let i = 0;
  return () => tokens[i++ % tokens.length] as string;
}

async function mintFreshUsers(f: Fixtures, count: number): Promise<void> {
  while (f.freshUsers.length < count) {
    const batch = Array.from({ length: Math.min(500, count - f.freshUsers.length) }, (_, i) =>
      f.mint(`auth0|bench-${f.runTag}-w${f.freshUsers.length + i}`, ''),
    );
    f.freshUsers.push(...(await Promise.all(batch)));
  }
}

// ---------------------------------------------------------------------------------------------
// Stores

interface StoreSetup {
  env: NodeJS.ProcessEnv;
  config: Readonly<Config>;
  dataDir: string;
  cleanup(): Promise<void>;
  /** The database's size on disk, in bytes. */
  size(): Promise<number>;
}

async function setupStore(opts: Options, store: 'sqlite' | 'postgres', port: number): Promise<StoreSetup> {
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), `cardshelf-bench-${store}-`)));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: opts.logLevel,
    RATE_LIMIT_PER_MINUTE: '0',
  };
  delete env.DATABASE_URL;
  const removeDir = async (): Promise<void> => {
    if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
  };

  if (store === 'sqlite') {
    return {
      env,
      config: loadConfig(env),
      dataDir,
      cleanup: removeDir,
      async size() {
        let total = 0;
        for (const name of await readdir(dataDir)) {
          if (name.startsWith('cardshelf.db')) total += (await stat(path.join(dataDir, name))).size;
        }
        return total;
      },
    };
  }

  // PostgreSQL: a database of its own for the run when the role may create one, dropped after.
  const adminUrl = process.env.DATABASE_URL as string;
  const dbName = `cardshelf_bench_${Date.now().toString(36)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  let url = adminUrl;
  let created = false;
  try {
    await client.query(`create database ${dbName}`);
    const u = new URL(adminUrl);
    u.pathname = `/${dbName}`;
    url = u.toString();
    created = true;
  } catch (e) {
    log(`postgres: cannot create a database of its own (${(e as Error).message}); using DATABASE_URL as it is`);
  } finally {
    await client.end();
  }
  env.DATABASE_URL = url;
  return {
    env,
    config: loadConfig(env),
    dataDir,
    async cleanup() {
      await removeDir();
      if (!created) return;
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists ${dbName} with (force)`);
      } finally {
        await c.end();
      }
    },
    async size() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const r = await c.query<{ n: string }>('select pg_database_size(current_database()) as n');
        return Number(r.rows[0]?.n ?? 0);
      } finally {
        await c.end();
      }
    },
  };
}

interface DatasetCounts {
  users: number;
  cards: number;
  libraryRecords: number;
  groups: number;
  wishlists: number;
  events: number;
}

async function countDataset(config: Readonly<Config>): Promise<DatasetCounts> {
  const store = openStore(config.database);
  try {
    const count = async (table: 'family_memberships' | 'cards' | 'library_records' | 'library_groups' | 'wishlists' | 'family_events'): Promise<number> => {
      const r = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(store.db);
      return Number(r.rows[0]?.n ?? 0);
    };
    return {
      users: await count('family_memberships'),
      cards: await count('cards'),
      libraryRecords: await count('library_records'),
      groups: await count('library_groups'),
      wishlists: await count('wishlists'),
      events: await count('family_events'),
    };
  } finally {
    await store.db.destroy();
  }
}

interface StoreResult {
  store: 'sqlite' | 'postgres';
  seed: { users: number; seconds: number | null };
  dataset: DatasetCounts;
  dbMB: number;
  rss: { idleMB: number; afterMB: number; peakMB: number };
  scenarios: ScenarioResult[];
}

async function benchStore(opts: Options, store: 'sqlite' | 'postgres', ceiling: Ceiling): Promise<StoreResult> {
  const port = await freePort();
  const setup = await setupStore(opts, store, port);
  let server: Server | undefined;
  try {
    let seedSeconds: number | null = null;
    const hasDb = store === 'sqlite' && opts.dataDir !== undefined && (await readdir(setup.dataDir).catch((): string[] => [])).includes('cardshelf.db');
    if (hasDb) {
      log(`${store}: using the database in ${setup.dataDir} as it is`);
    } else {
      log(`${store}: seeding ${opts.scale} users (cardshelf seed --scale ${opts.scale})`);
      const t0 = performance.now();
      const code = await runCardshelf(opts, setup.env, ['seed', '--scale', String(opts.scale)]);
      if (code === 2) log(`${store}: the database was seeded already; using it as it is`);
      else if (code !== 0) throw new Error(`cardshelf seed exited with ${code}`);
      else seedSeconds = Math.round((performance.now() - t0) / 100) / 10;
    }

    const profileDir = opts.cpuProf ? await mkdtemp(path.join(os.tmpdir(), 'cardshelf-prof-')) : undefined;
    server = await startServer(opts, setup.env, profileDir);
    const idle = await memoryOf(server.child.pid as number);
    log(`${store}: server up (pid ${server.child.pid}, ${idle.rssMB} MB); creating fixtures`);
    const fixtures = await makeFixtures(server.base, setup.config);
    const dataset = await countDataset(setup.config);
    log(`${store}: ${dataset.cards.toLocaleString('en')} cards, ${dataset.users.toLocaleString('en')} users in the database`);

    const wanted = scenarios(fixtures).filter((s) => !opts.scenarios || opts.scenarios.includes(s.name));
    if (wanted.length === 0) throw new Error(`no scenario matches --scenarios ${opts.scenarios?.join(',')}`);
    const results: ScenarioResult[] = [];
    for (const s of wanted) {
      log(`${store}: ${s.name} ...`);
      const r = await runScenario(opts, server, ceiling, fixtures, s);
      results.push(r);
      log(`${store}: ${formatRow(r)}`);
    }
    const after = await memoryOf(server.child.pid as number);
    await server.stop();
    server = undefined;

    if (opts.cpuProf) {
      for (const r of results) {
        if (r.profile) process.stdout.write(`\nCPU profile of the server during ${store}/${r.name}:\n${formatSummary(r.profile)}\n`);
      }
    }
    return {
      store,
      seed: { users: opts.scale, seconds: seedSeconds },
      dataset,
      dbMB: Math.round((await setup.size()) / 1048576),
      rss: { idleMB: idle.rssMB, afterMB: after.rssMB, peakMB: after.peakMB },
      scenarios: results,
    };
  } finally {
    await server?.stop();
    await setup.cleanup();
  }
}

// ---------------------------------------------------------------------------------------------
// Reporting

const fmt = (n: number): string => n.toLocaleString('en');
const ms = (n: number): string => (n < 10 ? n.toFixed(2) : n.toFixed(1));

function targetText(t: Scenario['target']): string {
  const parts: string[] = [];
  if (t.ratio !== undefined) parts.push(`>= ${t.ratio * 100}% of ceiling`);
  if (t.p99Ms !== undefined) parts.push(`p99 < ${t.p99Ms} ms`);
  if (t.rps !== undefined) parts.push(`>= ${fmt(t.rps)} req/s`);
  return parts.join(', ');
}

function formatRow(r: ScenarioResult): string {
  const errs = r.cardshelf.non2xx + r.cardshelf.errors + r.cardshelf.timeouts;
  return (
    `${r.name}: ${fmt(r.cardshelf.rps)} req/s, p50 ${ms(r.cardshelf.p50)} ms, p99 ${ms(r.cardshelf.p99)} ms, ` +
    `${fmt(r.cardshelf.cpuUsPerRequest)} µs CPU/req; ceiling ${fmt(r.ceiling.rps)} req/s (p50 ${ms(r.ceiling.p50)} ms, ` +
    `${fmt(r.ceiling.cpuUsPerRequest)} µs/req); ratio ${(r.ratio * 100).toFixed(1)}%; ` +
    `other load ${r.cardshelf.otherCores}/${r.ceiling.otherCores} cores` +
    (errs > 0 ? `; ${errs} FAILED requests` : '')
  );
}

function markdownTable(results: ScenarioResult[]): string {
  const lines = [
    '| scenario | request | bytes | req/s | p50 ms | p99 ms | CPU µs/req | ceiling req/s | ceiling p50 ms | ceiling µs/req | ratio | other load (cores) | target | met |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of results) {
    const errs = r.cardshelf.non2xx + r.cardshelf.errors + r.cardshelf.timeouts;
    lines.push(
      `| ${r.name} | \`${r.request}\` → ${r.status} | ${fmt(r.responseBytes)} | ${fmt(r.cardshelf.rps)} | ${ms(r.cardshelf.p50)} | ${ms(r.cardshelf.p99)} | ` +
        `${fmt(r.cardshelf.cpuUsPerRequest)} | ${fmt(r.ceiling.rps)} | ${ms(r.ceiling.p50)} | ${fmt(r.ceiling.cpuUsPerRequest)} | ${(r.ratio * 100).toFixed(1)}% | ` +
        `${r.cardshelf.otherCores} / ${r.ceiling.otherCores} | ${targetText(r.target)} | ${r.targetMet ? 'yes' : 'no'}${errs > 0 ? ` (${errs} failed)` : ''} |`,
    );
  }
  return lines.join('\n');
}

interface Machine {
  cpu: string;
  cores: number;
  node: string;
  os: string;
  memoryGB: number;
  loadAverage: number[];
}

function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    memoryGB: Math.round(os.totalmem() / 1073741824),
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

const MARK_START = '<!-- bench:runs:start (bench/run.ts adds each recorded run here, newest first) -->';
const MARK_END = '<!-- bench:runs:end -->';

async function record(opts: Options, command: string, startedAt: Date, m: Machine, stores: StoreResult[]): Promise<void> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  for (const s of stores) {
    const file = path.join(RESULTS_DIR, `${stamp}-${s.store}.json`);
    const body = {
      startedAt: startedAt.toISOString(),
      command,
      label: opts.label,
      machine: m,
      options: { ...opts, stores: undefined, store: s.store },
      ...s,
    };
    await writeFile(file, `${JSON.stringify(body, null, 2)}\n`);
    log(`wrote ${path.relative(root, file)}`);
  }

  const sections = stores.map((s) =>
    [
      `### ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC · ${s.store} · ${fmt(s.dataset.cards)} cards${opts.label ? ` · ${opts.label}` : ''}`,
      '',
      `\`${command}\` · ${m.cpu}, ${m.cores} cores, Node ${m.node} · load average at start ${m.loadAverage.join(' ')} · ` +
        `${opts.connections} connections, pipelining ${opts.pipelining}, ${opts.duration} s (+${opts.warmup} s warm-up) a run · ` +
        `workers ${opts.workers} · LOG_LEVEL ${opts.logLevel}`,
      '',
      `Data: ${fmt(s.dataset.users)} users, ${fmt(s.dataset.cards)} cards, ${fmt(s.dataset.libraryRecords)} library records, ` +
        `${fmt(s.dataset.groups)} groups, ${fmt(s.dataset.wishlists)} wishlists; database ${fmt(s.dbMB)} MB` +
        `${s.seed.seconds !== null ? `, seeded in ${s.seed.seconds} s` : ''}. ` +
        `Server RSS: ${s.rss.idleMB} MB idle, ${s.rss.afterMB} MB after the run, ${s.rss.peakMB} MB peak.`,
      '',
      markdownTable(s.scenarios),
      '',
    ].join('\n'),
  );
  let md: string;
  try {
    md = await readFile(RESULTS_MD, 'utf8');
  } catch {
    md = `# Benchmark results\n\n${MARK_START}\n${MARK_END}\n`;
  }
  if (!md.includes(MARK_START) || !md.includes(MARK_END)) md = `${md.trimEnd()}\n\n## Runs\n\n${MARK_START}\n${MARK_END}\n`;
  md = md.replace(MARK_START, `${MARK_START}\n\n${sections.join('\n')}`);
  await writeFile(RESULTS_MD, md);
  log(`updated ${path.relative(root, RESULTS_MD)}`);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const opts = readOptions(process.argv.slice(2));
  const shellWord = (a: string): string => (/^[\w./:=,@%+-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);
  const args = process.argv.slice(2).map(shellWord).join(' ');
  const command = `npm run bench${args ? ` -- ${args}` : ''}`;
  const startedAt = new Date();
  const m = machine();
  log(
    `bench: ${m.cpu}, ${m.cores} cores, Node ${m.node}, load ${m.loadAverage.join(' ')}; ` +
      `${opts.connections} connections, pipelining ${opts.pipelining}, ${opts.duration} s + ${opts.warmup} s warm-up; stores: ${opts.stores.join(', ')}`,
  );
  const ceiling = await startCeiling();
  const results: StoreResult[] = [];
  try {
    for (const store of opts.stores) results.push(await benchStore(opts, store, ceiling));
  } finally {
    await ceiling.stop();
  }

  for (const s of results) {
    process.stdout.write(
      `\n${s.store}: ${fmt(s.dataset.cards)} cards, database ${fmt(s.dbMB)} MB, server RSS ${s.rss.afterMB} MB (peak ${s.rss.peakMB} MB)\n`,
    );
    for (const r of s.scenarios) process.stdout.write(`  ${formatRow(r)}\n`);
  }
  if (opts.record) await record(opts, command, startedAt, m, results);

  // The one thing a run can fail on: requests that did not succeed (never a timing).
  const failed = results.flatMap((s) =>
    s.scenarios.filter((r) => r.cardshelf.non2xx + r.cardshelf.errors + r.cardshelf.timeouts > 0).map((r) => `${s.store}/${r.name}`),
  );
  if (failed.length > 0) {
    log(`bench: requests failed in ${failed.join(', ')}`);
    return 1;
  }
  if (opts.smoke) log('bench smoke: every scenario answered, on every store');
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    log(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  },
);
