import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, SqliteDialect, type DatabaseConnection, type Driver } from 'kysely';
import type { Database } from './database.js';
import type { StoreDialect } from './dialect.js';

/**
 * Kysely's SQLite dialect opens transactions with a deferred `begin`: two processes that both
 * read and then write would fail with SQLITE_BUSY on the upgrade. `begin immediate` takes the
 * write lock at the start (waiting up to busy_timeout), so every writing transaction is
 * serialised, in this process and across processes sharing the file.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection): Promise<void> => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}

export function openSqlite(file: string): SQLite.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  return sqlite;
}

export function sqliteDialect(file: string): StoreDialect {
  return {
    name: 'sqlite',
    createKysely: () =>
      new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: openSqlite(file) }) }),
    // `begin immediate` already holds the database-wide write lock.
    lockKey: async () => {},
    autoIncrementPrimaryKey: (col) => col.primaryKey().autoIncrement(),
  };
}
