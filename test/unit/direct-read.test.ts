import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { UnstorableText } from '../../src/db/errors.js';
import { preparedStatement } from '../../src/db/prepared.js';
import { sqliteDialect } from '../../src/db/sqlite.js';

/**
 * On SQLite, a compiled read runs on the spot while the one connection is free (src/db/direct-read.ts),
 * and goes Kysely's way, waiting for the connection, while anyone holds it: it must never see
 * the uncommitted writes of a transaction open on that connection.
 */
describe('direct reads on SQLite', () => {
  const dialect = sqliteDialect({ kind: 'sqlite', file: ':memory:', statementTimeoutMs: 1000 });
  let db: Kysely<Database>;
  const seen: string[] = [];
  const read = preparedStatement(
    (on, scope: string) => on.selectFrom('change_counters').select('version').where('scope', '=', scope),
    1,
  );

  beforeAll(async () => {
    db = dialect.createKysely();
    dialect.watchStatements((query) => seen.push(query.sql));
    await sql`create table change_counters (scope text primary key, version integer not null)`.execute(db);
    await db.insertInto('change_counters').values({ scope: 'a', version: 1 }).execute();
  });
  afterAll(() => db.destroy());

  it('answers as a read through Kysely does, and is reported as a statement', async () => {
    seen.length = 0;
    expect(await read(db, 'a')).toEqual([{ version: 1 }]);
    expect(await read(db, 'missing')).toEqual([]);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatch(/^select "version" from "change_counters"/);
  });

  it('waits for a transaction open on the connection, and never sees its uncommitted writes', async () => {
    let inside!: () => void;
    const opened = new Promise<void>((resolve) => (inside = resolve));
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    const transaction = db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('change_counters').values({ scope: 'b', version: 2 }).execute();
        await trx.updateTable('change_counters').set({ version: 9 }).where('scope', '=', 'a').execute();
        inside();
        await gate;
        throw new Error('rolled back');
      })
      .catch((err: Error) => err.message);
    await opened;

    let answered = false;
    const during = Promise.all([read(db, 'a'), read(db, 'b')]).finally(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    finish();
    expect(await transaction).toBe('rolled back');
    expect(await during).toEqual([[{ version: 1 }], []]);
  });

  it('refuses NUL in a text value as a statement on a connection does', async () => {
    await expect(read(db, 'a\u0000b')).rejects.toBeInstanceOf(UnstorableText);
  });
});
