import { rename } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/store.js';
import { inUnitOfWork, userLock } from '../../src/db/unit-of-work.js';
import { errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import { testDialect } from '../support/test-database.js';

/**
 * The database failing under one app, driven in process (the chaos suites drive real processes
 * under load): each failure answers 503 `unavailable` with Retry-After in the error shape, never
 * a 500, and the app serves again once the failure is gone.
 */
function expectUnavailable(r: Reply, message: RegExp): void {
  expect(r.status, JSON.stringify(r.body)).toBe(503);
  expect(errorCode(r)).toBe('unavailable');
  expect(r.body.error.message).toMatch(message);
  expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
  // The database's own words stay in the log.
  expect(JSON.stringify(r.body)).not.toMatch(/SQLITE|ECONN|pg_|statement|terminat/i);
}

describe.runIf(testDialect() === 'sqlite')('the SQLite file moved away while the app runs', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp();
    token = await t.token('auth0|mover');
  });
  afterAll(() => t.close());

  it('refuses writes (503, nothing written to the moved file), keeps reading, /readyz 503; resumes when it is back', async () => {
    const kept = await t.call('POST', '/content', { token, body: { title: 'Before' } });
    expect(kept.status).toBe(201);
    await rename(t.dataDir, `${t.dataDir}.away`);
    try {
      expectUnavailable(await t.call('POST', '/content', { token, body: { title: 'Lost?' } }), /no longer where it was opened/);
      expectUnavailable(await t.call('POST', '/wishlists', { token, body: { content: [] } }), /no longer where/);
      expectUnavailable(await t.call('GET', '/readyz'), /no longer where/);
      const read = await t.call('GET', '/content/mine', { token });
      expect(read.status).toBe(200);
      expect(read.body.cards.map((c: { title: string }) => c.title)).toEqual(['Before']);
    } finally {
      await rename(`${t.dataDir}.away`, t.dataDir);
    }
    expect((await t.call('GET', '/readyz')).status).toBe(200);
    expect((await t.call('POST', '/content', { token, body: { title: 'After' } })).status).toBe(201);
    const titles = (await t.call('GET', '/content/mine', { token })).body.cards.map((c: { title: string }) => c.title);
    expect(titles.sort()).toEqual(['After', 'Before']);
  });
});

describe.runIf(testDialect() === 'postgres')('PostgreSQL refusing or stalling', () => {
  let t: TestApp;
  let token: string;
  let databaseUrl: string;
  const user = 'auth0|stalled';

  /** A session of the test's role on the app's database. */
  async function session<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  }

  const databaseName = (): string => decodeURIComponent(new URL(databaseUrl).pathname.slice(1));

  /**
   * Ends the app's connections, so that its pool opens new ones (which take new settings), and
   * waits until their server processes are gone (pg_terminate_backend only signals them).
   */
  const terminateAppConnections = (): Promise<unknown> =>
    session(async (c) => {
      // Client sessions only: an autovacuum worker of this database is a superuser's process,
      // which this role may not terminate (and which is no connection of the app's).
      const others = "from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'";
      const { rows: ended } = await c.query<{ pid: number }>(`select pid from (select pid, pg_terminate_backend(pid) ${others}) t`);
      const pids = ended.map((r) => r.pid);
      // Those processes, not every session: the app's listener connects again within 100 ms.
      for (let i = 0; i < 100; i++) {
        const { rows } = await c.query<{ n: string }>('select count(*) as n from pg_stat_activity where pid = any($1)', [pids]);
        if (Number(rows[0]!.n) === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error('the terminated connections did not end');
    });

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_STATEMENT_TIMEOUT_MS: '500' });
    if (t.config.database.kind !== 'postgres') throw new Error('expected PostgreSQL');
    databaseUrl = t.config.database.url;
    token = await t.token(user);
  });
  afterAll(() => t.close());

  it('a statement that waits past DATABASE_STATEMENT_TIMEOUT_MS (a lock held elsewhere) answers 503, and the lock is not left held', async () => {
    // Another process holds the user's lock: the wishlist create waits for it inside the database.
    const store = openStore(t.config.database);
    try {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holder = inUnitOfWork(store, [userLock(user)], async () => {
        locked();
        await released;
      });
      await isLocked;
      // The holder stays idle in its transaction for longer than the statement bound, but under
      // the idle-in-transaction one (10 s): only the waiting statement is cut short.
      expectUnavailable(await t.call('POST', '/wishlists', { token, body: { content: [] } }), /did not answer in time/);
      release();
      await holder;
    } finally {
      await store.db.destroy();
    }
    expect((await t.call('POST', '/wishlists', { token, body: { content: [] } })).status).toBe(201);
  });

  it('a database that turned read-only: writes 503, reads 200, /readyz 503; all well again once it takes writes', async () => {
    expect((await t.call('POST', '/content', { token, body: { title: 'Writable' } })).status).toBe(201);
    await session((c) => c.query(`alter database "${databaseName()}" set default_transaction_read_only = on`));
    try {
      // Inside the try: whatever fails, the database takes writes again for the next test.
      await terminateAppConnections();
      expectUnavailable(await t.call('POST', '/content', { token, body: { title: 'Refused' } }), /refuses writes/);
      expectUnavailable(await t.call('GET', '/readyz'), /refuses writes/);
      const read = await t.call('GET', '/content/mine', { token });
      expect(read.status).toBe(200);
      expect(read.body.cards.map((c: { title: string }) => c.title)).toEqual(['Writable']);
    } finally {
      await session(async (c) => {
        // This session is read-only too, as every new one now is.
        await c.query('set default_transaction_read_only = off');
        await c.query(`alter database "${databaseName()}" reset default_transaction_read_only`);
      });
      await terminateAppConnections();
    }
    expect((await t.call('GET', '/readyz')).status).toBe(200);
    expect((await t.call('POST', '/content', { token, body: { title: 'Writable again' } })).status).toBe(201);
  });

  it('every connection terminated between requests: the next requests are answered as if nothing happened', async () => {
    await t.call('GET', '/content/mine', { token });
    await terminateAppConnections();
    // Pooled connections are dead: a read or a transaction's `begin` finds out and takes a new one.
    expect((await t.call('GET', '/content/mine', { token })).status).toBe(200);
    await terminateAppConnections();
    expect((await t.call('POST', '/wishlists', { token, body: { content: [] } })).status).toBe(201);
  });
});
