import { execFile } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOrCreateSigningKey, mintToken } from '../../src/auth/local-issuer.js';
import { databaseWarnings, errorLines, exits, logMarks, startTraffic, summary, timeToRecover, type TrafficReport } from '../support/chaos.js';
import { http, startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

const run = promisify(execFile);

/**
 * Two real instances on one SQLite file, under traffic, while the storage fails under them: the
 * disk fills up (a small tmpfs), the data directory is moved away, the database files are made
 * immutable. The same four rules as on PostgreSQL (chaos-postgres.test.ts): no process exits,
 * every answer is a 2xx or a 503 `unavailable` with Retry-After, every acknowledged write is
 * there afterwards, and service resumes without a restart. Mounting and chattr need root.
 */
const why = process.getuid?.() === 0 ? undefined : 'needs root (mount a tmpfs, chattr)';
const runHere = testDialect() === 'sqlite' && (why === undefined || process.env.CI === 'true');
const CLIENT_TIMEOUT_MS = 12_000;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Site {
  dataDir: string;
  servers: ServerProcess[];
  tokens: string[];
}

describe.runIf(runHere)('two instances while the storage of their SQLite file fails', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });

  /** Two servers on `dataDir`, with tokens for four users. */
  async function site(dataDir: string): Promise<Site> {
    if (why) throw new Error(`the chaos suite cannot run here: ${why}`);
    const keyDir = await mkdtemp(path.join(tmpdir(), 'cardshelf-chaos-key-'));
    cleanups.push(() => rm(keyDir, { recursive: true, force: true }));
    const keyFile = path.join(keyDir, 'signing-key.json');
    const key = await loadOrCreateSigningKey(keyFile);
    const env = { DATA_DIR: dataDir, SIGNING_KEY_FILE: keyFile, LOG_LEVEL: 'info', READY_TIMEOUT_MS: '1000' };
    // One first, so that the schema exists before the second opens the file.
    const first = await startServer(env);
    const second = await startServer(env);
    const servers = [first, second];
    cleanups.push(() => Promise.all(servers.map((s) => s.stop('SIGKILL', 0))));
    const tokens = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        mintToken(key, { sub: `auth0|chaos-${n}`, scope: 'user:content:manage', expiresIn: '1h', issuer: 'urn:cardshelf:local', audience: 'cardshelf' }),
      ),
    );
    return { dataDir, servers, tokens };
  }

  function lost(dataDir: string, report: TrafficReport): string[] {
    const db = new SQLite(path.join(dataDir, 'cardshelf.db'), { readonly: true });
    try {
      const has = db.prepare('select 1 from cards where card_id = ?');
      return report.acknowledged.filter((id) => has.get(id) === undefined);
    } finally {
      db.close();
    }
  }

  /** Polls /readyz until it answers `status` (true) or `limitMs` passes (false). */
  async function readyzBecomes(server: ServerProcess, status: number, limitMs: number): Promise<boolean> {
    const until = Date.now() + limitMs;
    while (Date.now() < until) {
      const r = await http(server.url, 'GET', '/readyz', { timeoutMs: 5_000 });
      if (r.status === status) {
        if (status === 503) expect(r.body.error.code).toBe('unavailable');
        return true;
      }
      await pause(100);
    }
    return false;
  }

  /**
   * `trafficSees503`: whether the traffic itself must meet the fault. A full disk is met first by
   * whichever write needs a new page, which may be /readyz's probe rather than the traffic's.
   */
  async function underFault(name: string, s: Site, inject: () => Promise<void>, trafficSees503 = true): Promise<TrafficReport> {
    const marks = logMarks(s.servers);
    const traffic = startTraffic(s.servers, s.tokens, { clients: 6, timeoutMs: CLIENT_TIMEOUT_MS });
    await pause(1_000);
    await inject();
    const recovered = await timeToRecover(s.servers, s.tokens[0]!, 30_000);
    await pause(300);
    const report = await traffic.stop();
    const missing = lost(s.dataDir, report);
    console.log(summary(name, 1, report, recovered, missing.length));
    expect(exits(s.servers)).toEqual([]);
    expect(report.violations, errorLines(s.servers)).toEqual([]);
    expect(missing).toEqual([]);
    // What failed is logged once per kind (and 10 s), as a warning: never a stack per request.
    expect(errorLines(s.servers)).toBe('');
    expect(databaseWarnings(s.servers, marks)).toBeLessThan(Math.max(10, (report.byStatus['503'] ?? 0) / 2));
    if (trafficSees503) expect(report.byStatus['503'] ?? 0).toBeGreaterThan(0);
    return report;
  }

  it('a full disk: writes 503, /readyz 503, and service resumes once space is freed', async () => {
    const mount = await mkdtemp(path.join(tmpdir(), 'cardshelf-full-'));
    await run('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mount]);
    cleanups.push(() => rm(mount, { recursive: true, force: true }));
    cleanups.push(() => run('umount', ['-l', mount]));
    const s = await site(path.join(mount, 'data'));
    const filler = path.join(mount, 'filler');
    await underFault('disk-full', s, async () => {
      const fd = openSync(filler, 'w');
      const chunk = Buffer.alloc(64 * 1024);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      } finally {
        closeSync(fd);
      }
      // The writes fill what SQLite had left in its files, then fail. How long that takes varies
      // with the log's size at the fault: SQLite keeps the file and, after each checkpoint, writes
      // it again from its start, and only the database file's growth meets the full disk at
      // first. Run alone here, the whole test took 11 s once and 19 s once; in a loaded run of
      // npm test the wait passed 20 s.
      expect(await readyzBecomes(s.servers[0]!, 503, 60_000)).toBe(true);
      await rm(filler);
    }, false);
  }, 120_000);

  it('the data directory moved away: writes 503 (none lost to the moved file), /readyz 503, resumes when it is back', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'cardshelf-moved-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const dataDir = path.join(root, 'data');
    await mkdir(dataDir);
    const s = await site(dataDir);
    await underFault('data-dir-moved', s, async () => {
      await rename(dataDir, `${dataDir}.away`);
      expect(await readyzBecomes(s.servers[1]!, 503, 5_000)).toBe(true);
      const write = await http(s.servers[0]!.url, 'POST', '/content', { token: s.tokens[0]!, body: { title: 'Nowhere' } });
      expect(write.status).toBe(503);
      expect(write.body.error.code).toBe('unavailable');
      await pause(1_500);
      await rename(`${dataDir}.away`, dataDir);
    });
  }, 120_000);

  it('the database files made immutable: writes 503, /readyz 503, resumes when they are writable again', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'cardshelf-immutable-'));
    const dataDir = path.join(root, 'data');
    const files = ['cardshelf.db', 'cardshelf.db-wal'].map((f) => path.join(dataDir, f));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    cleanups.push(() => run('chattr', ['-i', ...files]));
    await mkdir(dataDir);
    const s = await site(dataDir);
    await underFault('immutable', s, async () => {
      await run('chattr', ['+i', ...files]);
      expect(await readyzBecomes(s.servers[0]!, 503, 10_000)).toBe(true);
      await pause(1_500);
      await run('chattr', ['-i', ...files]);
    });
  }, 120_000);
});

describe.runIf(testDialect() === 'sqlite' && !runHere)('the SQLite chaos suite', () => {
  it.skip(`is left out here: ${why}`, () => {});
});
