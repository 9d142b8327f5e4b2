import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { preparedStatement } from '../../src/db/prepared.js';

/**
 * A statement compiled once (src/db/prepared.ts) serves the database and every transaction it
 * opens: the write paths run their statements in a unit of work's transaction, so a cache kept
 * per Kysely object would compile again in each one.
 */
describe('preparedStatement', () => {
  let db: Kysely<Database>;

  beforeAll(async () => {
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
    await sql`create table change_counters (scope text primary key, version integer not null)`.execute(db);
  });
  afterAll(async () => {
    await db.destroy();
  });

  it('is built once for the database and its transactions, and runs with each call’s values', async () => {
    let builds = 0;
    const insert = preparedStatement((on, { scope, version }: { scope: string; version: number }) => {
      builds += 1;
      return on.insertInto('change_counters').values({ scope, version });
    });
    const read = preparedStatement((on, { scope }: { scope: string }) => on.selectFrom('change_counters').select('version').where('scope', '=', scope));

    await insert(db, { scope: 'a', version: 1 });
    await db.transaction().execute(async (trx) => {
      await insert(trx, { version: 2, scope: 'b' });
      expect(await read(trx, { scope: 'b' })).toEqual([{ version: 2 }]);
    });
    await db.transaction().execute((trx) => insert(trx, { scope: 'c', version: 3 }));
    expect(builds).toBe(1);
    expect(await read(db, { scope: 'a' })).toEqual([{ version: 1 }]);
    expect(await read(db, { scope: 'c' })).toEqual([{ version: 3 }]);
    expect(await read(db, { scope: 'missing' })).toEqual([]);
  });

  it('places each parameter by its name, whatever the order it is given or used in', async () => {
    const pair = preparedStatement((on, { low, high }: { low: number; high: number }) =>
      on.selectFrom('change_counters').select('scope').where('version', '>=', low).where('version', '<=', high).orderBy('scope'),
    );
    await db.insertInto('change_counters').values([{ scope: 'p1', version: 10 }, { scope: 'p2', version: 20 }]).execute();
    expect(await pair(db, { high: 15, low: 5 })).toEqual([{ scope: 'p1' }]);
    expect(await pair(db, { low: 15, high: 25 })).toEqual([{ scope: 'p2' }]);
  });

  it('takes a list as a list parameter, its members by their index', async () => {
    const two = preparedStatement((on, scopes: readonly string[]) =>
      on.selectFrom('change_counters').select('scope').where('scope', 'in', [scopes[0]!, scopes[1]!]).orderBy('scope'),
    );
    expect(await two(db, ['a', 'c'])).toEqual([{ scope: 'a' }, { scope: 'c' }]);
  });

  it('refuses a statement that reads a parameter and does not place it as a value', async () => {
    const nested = preparedStatement((on, { scopes }: { scopes: readonly string[] }) =>
      on.selectFrom('change_counters').select('version').where('scope', '=', scopes[0]!),
    );
    await expect(async () => nested(db, { scopes: ['a'] })).rejects.toThrow(/parameter scopes is not a value/);
  });
});
