import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/dialect.js';
import { openStore } from '../../src/db/store.js';
import { seedScale } from '../../src/seed/scale.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { testDialect } from '../support/test-database.js';

/**
 * The planner's statistics after a bulk load (src/db/sqlite.ts, `dropValueSamples`): on SQLite,
 * row counts per index (`sqlite_stat1`) and no value samples (`sqlite_stat4`), whose presence
 * makes SQLite plan a statement again each time a value is bound to it. A file analyzed by an
 * earlier version (samples and all) loses its samples when it is opened.
 */
describe.skipIf(testDialect() !== 'sqlite')('planner statistics on SQLite', () => {
  let t: TestApp;
  const stores: Store[] = [];
  const open = (): Store => {
    const store = openStore(t.config.database);
    stores.push(store);
    return store;
  };
  const rows = async (store: Store, table: 'sqlite_stat1' | 'sqlite_stat4'): Promise<number> =>
    Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(store.db)).rows[0]?.n);

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    for (const store of stores) await store.db.destroy();
    await t.close();
  });

  it('a bulk load leaves row counts and no value samples', async () => {
    const store = open();
    await seedScale(store, { users: 4, cardsPerUser: 6, catalogueCards: 12, prefix: 'stats' }, () => {});
    expect(await rows(store, 'sqlite_stat1')).toBeGreaterThan(0);
    expect(await rows(store, 'sqlite_stat4')).toBe(0);
  });

  it('a file analyzed with samples loses them when opened, keeping the row counts', async () => {
    const before = open();
    // As `analyze` alone leaves a file (an earlier version's import or seed).
    await sql`analyze`.execute(before.db);
    const counts = await rows(before, 'sqlite_stat1');
    expect(await rows(before, 'sqlite_stat4')).toBeGreaterThan(0);

    const reopened = open();
    expect(await rows(reopened, 'sqlite_stat4')).toBe(0);
    expect(await rows(reopened, 'sqlite_stat1')).toBe(counts);
    // The running server still answers from the same file.
    expect((await t.call('GET', '/readyz')).status).toBe(200);
  });
});
