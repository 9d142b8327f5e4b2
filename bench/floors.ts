/**
 * What this machine allows below Cardshelf's own code: the floors issue 18's targets meet.
 *
 *   npm run bench:floors -- [--store sqlite|postgres|all] [--transactions N] [--seconds S] [--rounds R]
 *
 * 1. A write's statements alone, straight on the driver (better-sqlite3, node-postgres): no HTTP,
 *    no Kysely, one transaction after another on a migrated database of its own. The shape is
 *    the wishlist create's (the user's lock, the count, the insert, the counter bumped, the live
 *    event, the commit). The bench's writes all change one user's or one family's data, which
 *    their lock serialises (db/unit-of-work.ts): 1 / this time is the most of them a second
 *    the database can commit, whatever runs above it; on PostgreSQL the CPU this process spends
 *    a transaction is the drivers' part alone.
 * 2. PostgreSQL: one read, a primary-key select on a named statement: its time and the CPU this
 *    process spends on it (what every read that needs a statement pays before any of its own work).
 * 3. HTTP: a bare node:http server (the bench's ceiling) and a bare Fastify route answering the same
 *    304 (the headers Cardshelf's list-1000-304 answers with), each in a process of its own,
 *    loaded alternately as the bench loads: what Fastify itself leaves of the ceiling.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import { migrateToLatest } from '../src/db/migrate.js';
import { openStore } from '../src/db/store.js';
import { median } from './against.js';

/** The headers of Cardshelf's 304 to `GET /content/mine` (captured 2026-11-27; the request id varies). */
const HEADERS_304: Record<string, string> = {
  'x-request-id': 'a0e779f9-6d90-4dce-99f3-5d0c7c5fced1',
  'content-security-policy':
    "default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';frame-ancestors 'self';img-src 'self' data:;object-src 'none';script-src 'self';script-src-attr 'none';style-src 'self' https: 'unsafe-inline'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'ETag, Idempotent-Replayed, Retry-After, x-request-id',
  etag: '"lbqah8lEJtGe9WaiGd7XV1d473c"',
  'cache-control': 'private, no-cache',
};

interface Timed {
  wallUs: number;
  cpuUs: number;
}

/** Runs `step` `n` times after `n / 10` unmeasured: wall time and this process's CPU, each. */
async function timed(n: number, step: (i: number) => unknown): Promise<Timed> {
  for (let i = 0; i < Math.ceil(n / 10); i++) await step(-1 - i);
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await step(i);
  const used = process.cpuUsage(cpu);
  return { wallUs: Number(process.hrtime.bigint() - start) / 1000 / n, cpuUs: (used.user + used.system) / n };
}

const fmt = (t: Timed): string =>
  `${t.wallUs.toFixed(0)} µs a transaction (${Math.round(1e6 / t.wallUs).toLocaleString('en')} a second at most), ${t.cpuUs.toFixed(0)} µs of this process's CPU`;

/** The wishlist create's statements, as the migrated schema has them. */
const COUNT = 'select count(*) as n from wishlists where user_id = $1';
const INSERT = 'insert into wishlists (wishlist_id, share_id, user_id, content, created_at, updated_at) values ($1, $2, $3, $4, $5, $6)';
const BUMP =
  'insert into change_counters (scope, version) values ($1, 1) on conflict (scope) do update set version = change_counters.version + 1 returning version';
const EVENT = 'insert into live_events (family_id, user_id, kind, at, data) values (null, $1, $2, $3, $4) returning id';
const CONTENT = JSON.stringify([{ item: 'card-0001' }, { item: 'card-0002' }]);
const EVENT_DATA = JSON.stringify({ kind: 'wishlist.created', ids: { wishlistId: 'w' }, read: '/wishlists', tag: '"t"' });

async function sqliteFloor(n: number): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cardshelf-floor-'));
  try {
    const file = path.join(dir, 'cardshelf.db');
    const store = openStore({ kind: 'sqlite', file, statementTimeoutMs: 5000 });
    await migrateToLatest(store);
    await store.db.destroy();
    // As src/db/sqlite.ts opens it.
    const db = new SQLite(file, { timeout: 5000 });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    const sqliteSql = (s: string): string => s.replace(/\$\d+/g, '?');
    const [begin, count, insert, bump, event, commit] = ['begin immediate', COUNT, INSERT, BUMP, EVENT, 'commit'].map((s) => db.prepare(sqliteSql(s)));
    const at = new Date().toISOString();
    const t = await timed(n, (i) => {
      begin!.run();
      count!.get('floor-user');
      insert!.run(`w${i}`, `s${i}`, 'floor-user', CONTENT, at, at);
      bump!.get('wishlists:floor-user');
      event!.get('floor-user', 'wishlist.created', at, EVENT_DATA);
      commit!.run();
    });
    process.stdout.write(`sqlite: a wishlist create's statements (begin immediate ... commit), WAL, synchronous NORMAL: ${fmt(t)}\n`);
    await sqliteUpdateFloors(db, n);
    db.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Each of `shapes` `timed` in 3 alternating rounds: the medians of its wall time and CPU, by name. */
async function alternated(shapes: Record<string, () => unknown>, n: number): Promise<Map<string, Timed>> {
  const rounds = new Map<string, Timed[]>();
  for (let round = 0; round < 3; round++) {
    for (const [name, step] of Object.entries(shapes)) rounds.set(name, [...(rounds.get(name) ?? []), await timed(n, step)]);
  }
  return new Map([...rounds].map(([name, ts]) => [name, { wallUs: median(ts.map((t) => t.wallUs)), cpuUs: median(ts.map((t) => t.cpuUs)) }]));
}

/**
 * Issue 37's CPU target for `wishlist-put` (1.5x of 70f09df's whole request), beside what the
 * database alone costs for each: 70f09df's update (the row read, then the update, each committing
 * on its own) and this tree's (the user's transaction: the row read for If-Match, the update
 * with its new version, the counter bumped, the live event, the commit). Alternating rounds.
 */
async function sqliteUpdateFloors(db: SQLite.Database, n: number): Promise<void> {
  const at = new Date().toISOString();
  db.prepare('insert into wishlists (wishlist_id, share_id, user_id, content, created_at, updated_at) values (?, ?, ?, ?, ?, ?)').run('w-put', 's-put', 'put-user', CONTENT, at, at);
  const read = db.prepare('select * from wishlists where wishlist_id = ? and user_id = ?');
  const plainUpdate = db.prepare('update wishlists set content = ?, updated_at = ? where wishlist_id = ? and user_id = ?');
  const versionedUpdate = db.prepare('update wishlists set content = ?, name = ?, updated_at = ?, version = version + 1 where wishlist_id = ? and user_id = ? returning version');
  const [begin, bump, event, commit] = ['begin immediate', BUMP, EVENT, 'commit'].map((q) => db.prepare(q.replace(/\$\d+/g, '?')));
  const shapes = {
    '70f09df (read, update; no transaction)': () => {
      read.get('w-put', 'put-user');
      plainUpdate.run(CONTENT, at, 'w-put', 'put-user');
    },
    'this tree (begin immediate, read, update, bump, event, commit)': () => {
      begin!.run();
      read.get('w-put', 'put-user');
      versionedUpdate.get(CONTENT, null, at, 'w-put', 'put-user');
      bump!.get('wishlists:put-user');
      event!.get('put-user', 'wishlist.changed', at, EVENT_DATA);
      commit!.run();
    },
  };
  for (const [name, t] of await alternated(shapes, n)) {
    process.stdout.write(`sqlite: a wishlist update's statements, ${name}: ${t.cpuUs.toFixed(0)} µs of CPU (median of 3 rounds)\n`);
  }
}

/**
 * `sqliteUpdateFloors` on PostgreSQL: 70f09df's update (two statements, a round trip and a commit
 * each) and this tree's, pipelined as the guarded driver sends it (db/guarded-driver.ts) in three
 * round trips: `begin`, the lock and the read; the update and the bump; the event and `commit`.
 * The CPU is this process's: the driver's part of a request.
 */
async function postgresUpdateFloors(client: pg.Client, url: string, n: number): Promise<void> {
  const at = new Date().toISOString();
  await client.query(INSERT, ['w-put', 's-put', 'put-user', CONTENT, at, at]);
  const piped = new pg.Client({ connectionString: url, pipeline: true });
  await piped.connect();
  const read = { name: 'row-read', text: 'select * from wishlists where wishlist_id = $1 and user_id = $2', values: ['w-put', 'put-user'] };
  const shapes = {
    '70f09df (read, update; no transaction: 2 round trips)': async () => {
      await client.query(read);
      await client.query({ name: 'plain-update', text: 'update wishlists set content = $1, updated_at = $2 where wishlist_id = $3 and user_id = $4', values: [CONTENT, at, 'w-put', 'put-user'] });
    },
    'this tree (begin, lock, read; update, bump; event, commit: 3 round trips)': async () => {
      await Promise.all([piped.query('begin'), piped.query({ name: 'lock', text: 'select pg_advisory_xact_lock($1::bigint)', values: ['4243'] }), piped.query(read)]);
      await Promise.all([
        piped.query({
          name: 'versioned-update',
          text: 'update wishlists set content = $1, name = $2, updated_at = $3, version = version + 1 where wishlist_id = $4 and user_id = $5 returning version',
          values: [CONTENT, null, at, 'w-put', 'put-user'],
        }),
        piped.query({ name: 'bump', text: BUMP, values: ['wishlists:put-user'] }),
      ]);
      await Promise.all([piped.query({ name: 'event', text: EVENT, values: ['put-user', 'wishlist.changed', at, EVENT_DATA] }), piped.query('commit')]);
    },
  };
  for (const [name, t] of await alternated(shapes, n)) {
    process.stdout.write(`postgres: a wishlist update's statements, ${name}: ${t.wallUs.toFixed(0)} µs, ${t.cpuUs.toFixed(0)} µs of this process's CPU (medians of 3 rounds)\n`);
  }
  await piped.end();
}

async function postgresFloor(adminUrl: string, n: number): Promise<void> {
  const name = `cardshelf_floor_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    const store = openStore({ kind: 'postgres', url: url.toString(), poolSize: 2, connectTimeoutMs: 5000, statementTimeoutMs: 5000, idleInTransactionTimeoutMs: 5000 });
    await migrateToLatest(store);
    await store.db.destroy();
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    const at = new Date().toISOString();
    const write = await timed(n, async (i) => {
      await client.query('begin');
      await client.query({ name: 'lock', text: 'select pg_advisory_xact_lock($1::bigint)', values: ['4242'] });
      await client.query({ name: 'count', text: COUNT, values: ['floor-user'] });
      await client.query({ name: 'insert', text: INSERT, values: [`w${i}`, `s${i}`, 'floor-user', CONTENT, at, at] });
      await client.query({ name: 'bump', text: BUMP, values: ['wishlists:floor-user'] });
      await client.query({ name: 'event', text: EVENT, values: ['floor-user', 'wishlist.created', at, EVENT_DATA] });
      await client.query('commit');
    });
    process.stdout.write(`postgres: a wishlist create's statements (begin, lock, 4 statements, commit: 7 round trips): ${fmt(write)}\n`);
    await postgresUpdateFloors(client, url.toString(), n);
    const read = await timed(n * 5, () => client.query({ name: 'read', text: 'select scope, version from change_counters where scope = $1', values: ['wishlists:floor-user'] }));
    process.stdout.write(`postgres: one primary-key read on a named statement: ${read.wallUs.toFixed(0)} µs, ${read.cpuUs.toFixed(0)} µs of this process's CPU\n`);
    await client.end();
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

/** A child process answering every request with Cardshelf's 304: node:http alone, or a Fastify route. */
async function serve304(kind: 'http' | 'fastify'): Promise<void> {
  let port: number;
  if (kind === 'http') {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(304, HEADERS_304);
        res.end();
      });
    });
    server.keepAliveTimeout = 72_000;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as { port: number }).port;
  } else {
    const app = Fastify({ logger: false });
    app.get('/content/mine', (_request, reply) => {
      void reply.code(304).headers(HEADERS_304).send();
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as { port: number }).port;
  }
  process.send?.({ port });
  process.on('message', () => process.send?.(process.cpuUsage()));
  process.on('disconnect', () => process.exit(0));
}

async function httpFloor(seconds: number, rounds: number): Promise<void> {
  const self = new URL(import.meta.url).pathname;
  const results: Record<string, { rps: number; cpuUs: number }[]> = { http: [], fastify: [] };
  for (let round = 0; round < rounds; round++) {
    const order: ('http' | 'fastify')[] = round % 2 === 0 ? ['http', 'fastify'] : ['fastify', 'http'];
    for (const kind of order) {
      const child = fork(self, ['--serve-304', kind], { execArgv: process.execArgv });
      const [{ port }] = (await once(child, 'message')) as [{ port: number }];
      const cpuNow = async (): Promise<number> => {
        child.send('cpu');
        const [used] = (await once(child, 'message')) as [NodeJS.CpuUsage];
        return used.user + used.system;
      };
      const opts = { url: `http://127.0.0.1:${port}/content/mine`, connections: 32, headers: { 'if-none-match': HEADERS_304.etag! } };
      await autocannon({ ...opts, duration: 1 });
      const before = await cpuNow();
      const run = await autocannon({ ...opts, duration: seconds });
      const cpu = (await cpuNow()) - before;
      child.disconnect();
      results[kind]!.push({ rps: run.requests.average, cpuUs: cpu / run.requests.total });
    }
  }
  for (const kind of ['http', 'fastify'] as const) {
    const r = results[kind]!;
    process.stdout.write(
      `http: ${kind === 'http' ? 'node:http alone' : 'a bare Fastify route'} answering the 304: ${Math.round(median(r.map((x) => x.rps))).toLocaleString('en')} req/s, ${median(r.map((x) => x.cpuUs)).toFixed(1)} µs CPU a request (medians of ${rounds} rounds)\n`,
    );
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      store: { type: 'string', default: 'all' },
      transactions: { type: 'string', default: '2000' },
      seconds: { type: 'string', default: '4' },
      rounds: { type: 'string', default: '3' },
      'serve-304': { type: 'string' },
    },
  });
  const serving = values['serve-304'];
  if (serving === 'http' || serving === 'fastify') return serve304(serving);
  const positive = (name: 'transactions' | 'seconds' | 'rounds'): number => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number, not '${values[name]}'`);
    return n;
  };
  const n = positive('transactions');
  const seconds = positive('seconds');
  const rounds = positive('rounds');
  if (!['sqlite', 'postgres', 'all'].includes(values.store)) throw new Error('--store is sqlite, postgres or all');
  if (values.store !== 'postgres') await sqliteFloor(n);
  if (values.store !== 'sqlite') {
    if (process.env.DATABASE_URL) await postgresFloor(process.env.DATABASE_URL, n);
    else process.stdout.write('postgres: skipped (no DATABASE_URL)\n');
  }
  await httpFloor(seconds, rounds);
}

await main();
