import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { sqliteDialect } from '../../src/db/sqlite.js';
import { startCheckpointer } from '../../src/db/sqlite-checkpointer.js';

const sizeOf = async (file: string): Promise<number> => (await stat(file).catch(() => ({ size: 0 }))).size;

async function waitFor(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The log is copied into the database file by a worker thread, not by a commit (sqlite-checkpointer.ts). */
describe('SQLite checkpoints off the event loop', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-checkpoint-'));
    file = path.join(dir, 'db.sqlite');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('copies what commits wrote into the database file, though no commit crossed a checkpoint threshold', async () => {
    const db: Kysely<Database> = sqliteDialect({ kind: 'sqlite', file, statementTimeoutMs: 1000 }).createKysely();
    try {
      await sql`create table blobs (id integer primary key, body blob not null)`.execute(db);
      const before = await sizeOf(file);
      // ~2 MB in 50 commits: some 500 pages, half of SQLite's own threshold (1,000 pages), so only
      // the worker copies them into the file.
      for (let i = 0; i < 50; i++) await sql`insert into blobs (body) values (randomblob(40000))`.execute(db);
      await waitFor(async () => (await sizeOf(file)) >= before + 2_000_000, 'the database file to grow by the rows written');
      expect(await sizeOf(file)).toBeGreaterThanOrEqual(before + 2_000_000);
    } finally {
      await db.destroy();
    }
    // Stopped with the store: nothing holds the file, which opens and reads whole.
    const reopened = new SQLite(file, { fileMustExist: true });
    expect(reopened.prepare('select count(*) as n from blobs').get()).toEqual({ n: 50 });
    reopened.close();
  });

  it('reports a checkpoint it cannot make, and stops all the same', async () => {
    const errors: string[] = [];
    const checkpointer = startCheckpointer({
      file: path.join(dir, 'missing', 'db.sqlite'),
      intervalMs: 10,
      busyTimeoutMs: 100,
      onError: (message) => errors.push(message),
    });
    await waitFor(async () => errors.length > 0, 'the error to be reported', 5_000);
    expect(errors[0]).toMatch(/unable to open|directory does not exist|no such file/i);
    await checkpointer.stop();
  });
});
