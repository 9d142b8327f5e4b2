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
    const insert = preparedStatement((on, scope: string, version: number) => {
      builds += 1;
      return on.insertInto('change_counters').values({ scope, version });
    }, 2);
    const read = preparedStatement(
      (on, scope: string) => on.selectFrom('change_counters').select('version').where('scope', '=', scope),
      1,
    );

    await insert(db, 'a', 1);
    await db.transaction().execute(async (trx) => {
      await insert(trx, 'b', 2);
      expect(await read(trx, 'b')).toEqual([{ version: 2 }]);
    });
    await db.transaction().execute((trx) => insert(trx, 'c', 3));
    expect(builds).toBe(1);
    expect(await read(db, 'a')).toEqual([{ version: 1 }]);
    expect(await read(db, 'c')).toEqual([{ version: 3 }]);
    expect(await read(db, 'missing')).toEqual([]);
  });

  it('refuses a statement that leaves an argument out', async () => {
    const unused = preparedStatement(
      (on, scope: string, _other: string) => on.selectFrom('change_counters').select('version').where('scope', '=', scope),
      2,
    );
    await expect(async () => unused(db, 'a', 'b')).rejects.toThrow(/argument 1 is not a parameter/);
  });
});
