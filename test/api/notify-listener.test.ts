import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenForNotifications } from '../../src/db/notify-listener.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/test-database.js';

/**
 * The LISTEN connection of live events (src/db/notify-listener.ts): notifications wake it, and
 * when its connection is killed it connects again, and says so, so that the hub reads the log
 * for what was sent meanwhile.
 */
describe.runIf(testDialect() === 'postgres')('the PostgreSQL notification listener', () => {
  let database: TestDatabase;
  let url: string;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    url = database.env.DATABASE_URL!;
  });
  afterAll(() => database?.drop());

  const until = async (check: () => boolean, what: string): Promise<void> => {
    const deadline = Date.now() + 10_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('wakes on NOTIFY, and listens again after its connection is killed', async () => {
    let notified = 0;
    let listening = 0;
    const errors: unknown[] = [];
    const listener = listenForNotifications({ url, connectTimeoutMs: 5_000 }, 'test_channel', {
      onNotify: () => notified++,
      onListening: () => listening++,
      onError: (err) => errors.push(err),
    });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await until(() => listening === 1, 'the first LISTEN');
      await client.query(`select pg_notify('test_channel', '')`);
      await client.query(`select pg_notify('other_channel', '')`);
      await until(() => notified === 1, 'a notification');

      // Its session killed (a failover, a restart of PostgreSQL): it connects and listens again.
      await client.query(`select pg_terminate_backend(pid) from pg_stat_activity where query like 'LISTEN%' and datname = current_database()`);
      await until(() => listening === 2, 'the LISTEN after the kill');
      expect(errors.length).toBeGreaterThan(0);
      await client.query(`select pg_notify('test_channel', '')`);
      await until(() => notified === 2, 'a notification after the reconnect');
      expect(notified).toBe(2);
    } finally {
      await client.end();
      await listener.close();
    }
  });
});
