import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { UnstorableText } from '../../src/db/errors.js';
import { preparedStatement } from '../../src/db/prepared.js';
import { sqliteDialect } from '../../src/db/sqlite.js';
import { inUnitOfWork, type Db, type Trx } from '../../src/db/unit-of-work.js';

/** On SQLite, compiled statements run on the spot where they may (src/db/direct-statement.ts). */
describe('direct statements on SQLite', () => {
  const dialect = sqliteDialect({ kind: 'sqlite', file: ':memory:', statementTimeoutMs: 1000 });
  let db: Kysely<Database>;
  const seen: string[] = [];
  const readStatement = preparedStatement((on, { scope }: { scope: string }) =>
    on.selectFrom('change_counters').select('version').where('scope', '=', scope),
  );
  const insertStatement = preparedStatement((on, { scope, version }: { scope: string; version: number }) =>
    on.insertInto('change_counters').values({ scope, version }),
  );
  const read = (on: Db, scope: string) => readStatement(on, { scope });
  const insert = (on: Db, scope: string, version: number) => insertStatement(on, { scope, version });
  const unit = <T>(work: (trx: Trx) => Promise<T>): Promise<T> => inUnitOfWork({ db, dialect }, [], work);

  beforeAll(async () => {
    db = dialect.createKysely();
    dialect.watchStatements((query) => seen.push(query.sql));
    await sql`create table change_counters (scope text primary key, version integer not null)`.execute(db);
    await db.insertInto('change_counters').values({ scope: 'a', version: 1 }).execute();
  });
  afterAll(() => db.destroy());

  /**
   * A read on the database runs on the spot while the one connection is free, and goes Kysely's
   * way, waiting for the connection, while anyone holds it: it must never see the uncommitted
   * writes of a transaction open on that connection.
   */
  describe('reads', () => {
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

  /**
   * Inside a unit of work, its compiled statements run on the spot too: its transaction holds the
   * one connection while its work runs. They must still be the transaction's own statements.
   */
  describe("a unit of work's statements", () => {
    it('run at once, on the transaction: they see its writes, and a rollback takes theirs away', async () => {
      const outcome = await unit(async (trx) => {
        seen.length = 0;
        const written = insert(trx, 'u', 1);
        // Reported before anything was awaited: it ran on the spot, not through Kysely's queue.
        expect(seen).toEqual([expect.stringMatching(/^insert into "change_counters"/)]);
        expect(await written).toEqual([]);
        expect(await read(trx, 'u')).toEqual([{ version: 1 }]);
        throw new Error('rolled back');
      }).catch((err: Error) => err.message);
      expect(outcome).toBe('rolled back');
      expect(await read(db, 'u')).toEqual([]);
    });

    it('commit with their unit', async () => {
      await unit(async (trx) => {
        await insert(trx, 'c', 3);
      });
      expect(await read(db, 'c')).toEqual([{ version: 3 }]);
    });

    it('fail as statements on the connection do, and their unit rolls back', async () => {
      const outcome = await unit(async (trx) => {
        await insert(trx, 'd', 1);
        await insert(trx, 'c', 4);
      }).catch((err: Error & { code?: string }) => err.code);
      expect(outcome).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
      expect(await read(db, 'd')).toEqual([]);
      await expect(unit((trx) => insert(trx, 'nul\u0000', 1))).rejects.toBeInstanceOf(UnstorableText);
    });

    it("a transaction handle kept past its unit never runs in another unit's transaction", async () => {
      const kept = await unit(async (trx) => trx);
      const late = await unit(async () => {
        seen.length = 0;
        const outcome = await insert(kept, 'late', 1).catch((err: Error) => err.message);
        expect(seen).toEqual([]);
        return outcome;
      });
      // Kysely's own answer for a transaction that ended.
      expect(late).toBe('Transaction is already committed');
      expect(await read(db, 'late')).toEqual([]);
    });
  });
});
