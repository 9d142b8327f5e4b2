import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import {
  CompiledQuery,
  Kysely,
  sql,
  SqliteAdapter,
  SqliteDialect,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
} from 'kysely';
import type { SqliteConfig } from './config.js';
import type { Database } from './database.js';
import type { StoreDialect } from './dialect.js';
import { DatabaseUnavailable } from './errors.js';
import { registerDirectStatements } from './direct-statement.js';
import { GuardedDriver, isRead } from './guarded-driver.js';
import { BACKSTOP_PAGES, startCheckpointer, type Checkpointer } from './sqlite-checkpointer.js';
import { StatementWatch } from './statement-watch.js';

/**
 * Kysely's SQLite dialect opens transactions with a deferred `begin`: two processes that both
 * read and then write would fail with SQLITE_BUSY on the upgrade. `begin immediate` takes the
 * write lock at the start (waiting up to busy_timeout), so every writing transaction is
 * serialised, in this process and across processes sharing the file.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(
    private readonly file: SqliteFile,
    private readonly statements: StatementWatch,
    private readonly committed: () => void,
  ) {
    super({ database: file.database });
  }

  private guarded: GuardedDriver | undefined;

  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection): Promise<void> => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    const destroy = driver.destroy.bind(driver);
    driver.destroy = async (): Promise<void> => {
      await this.file.checkpointer?.stop();
      await destroy();
    };
    // A connection to a file never drops, so there is nothing to reconnect.
    this.guarded = new GuardedDriver(driver, {
      reconnectWindowMs: 0,
      checkWritable: () => this.file.checkInPlace(),
      committed: this.committed,
      statements: this.statements,
    });
    return this.guarded;
  }

  /**
   * A read on the spot (db/direct-statement.ts) while the connection is free: its statement runs
   * to completion before anything else can take the connection, so it sees what a read through
   * Kysely would. Not while a transaction is open on it (its uncommitted writes are not for
   * others to see), nor once the database is closed (the usual way then says so).
   */
  private readDirect(query: CompiledQuery): unknown[] | undefined {
    const { guarded } = this;
    const { database } = this.file;
    if (!guarded || guarded.busy || !database.open || !isRead(query)) return undefined;
    return guarded.runNow(query, () => database.prepare(query.sql).all(query.parameters as unknown[]));
  }

  /**
   * A statement of a running unit of work, on the spot: its transaction holds the one connection
   * (`inTransaction` says the `begin` ran and nothing ended it), so this is where Kysely would
   * run it too. No file check before a write here: the commit makes the check.
   */
  private runInUnit(query: CompiledQuery): unknown[] | undefined {
    const { guarded } = this;
    const { database } = this.file;
    if (!guarded || !database.open || !database.inTransaction) return undefined;
    return guarded.runNow(query, () => {
      const statement = database.prepare(query.sql);
      const parameters = query.parameters as unknown[];
      if (statement.reader) return statement.all(parameters);
      statement.run(parameters);
      return [];
    });
  }

  /**
   * Kysely's Migrator takes no lock on SQLite and runs migrations outside a transaction, so two
   * processes starting on one file would both apply a pending migration. SQLite does run DDL in
   * transactions: declared so, the Migrator reads what is applied and applies the rest inside
   * one transaction, which `begin immediate` makes the migration lock across processes. (A
   * migration that must switch foreign_keys off to rebuild a table cannot do so in it.)
   */
  override createAdapter(): DialectAdapter {
    const adapter = new TransactionalDdlSqliteAdapter();
    registerDirectStatements(adapter, { read: (query) => this.readDirect(query), inUnit: (query) => this.runInUnit(query) });
    return adapter;
  }
}

class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/** An open database file, and the check that it is still the file at its path. */
interface SqliteFile {
  readonly database: SQLite.Database;
  /** Throws DatabaseUnavailable('moved') when the path no longer leads to the opened file. */
  checkInPlace(): void;
  /** Copies the log into the file off the event loop (sqlite-checkpointer.ts); none in memory. */
  readonly checkpointer?: Checkpointer;
}

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Switches the file to WAL. When another process opens the same new file at the same moment (two
 * instances starting together), one of them may hold the lock the switch needs, and SQLite then
 * answers SQLITE_BUSY at once, without waiting in its busy handler; so the switch is tried again
 * within the statement bound. It runs once, while the process starts, so a short blocking pause
 * between tries holds up nothing else.
 */
function useWal(sqlite: SQLite.Database, boundMs: number): void {
  const deadline = Date.now() + boundMs;
  for (;;) {
    try {
      sqlite.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      const busy = err instanceof SQLite.SqliteError && (err.code === 'SQLITE_BUSY' || err.code === 'SQLITE_LOCKED');
      if (!busy || Date.now() >= deadline) throw err;
      Atomics.wait(PAUSE, 0, 0, 25);
    }
  }
}

function openSqlite(config: SqliteConfig): SqliteFile {
  const { file } = config;
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  // The busy timeout from the start, so that the pragmas below wait for another process too.
  const sqlite = new SQLite(file, { timeout: config.statementTimeoutMs });
  useWal(sqlite, config.statementTimeoutMs);
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  dropValueSamples(sqlite);
  const database = keepPreparedStatements(sqlite);
  if (file === ':memory:') return { database, checkInPlace: () => {} };

  sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  const checkpointer = startCheckpointer({
    file,
    intervalMs: CHECKPOINT_INTERVAL_MS,
    busyTimeoutMs: config.statementTimeoutMs,
    onError: warnOnce(),
  });
  // A process keeps writing to a file that was deleted or moved (its descriptor still works),
  // and every such write is lost at the next start. So before a write becomes durable the path
  // must still lead to the same file: one stat, about a microsecond.
  const opened = fs.statSync(file);
  return {
    database,
    checkpointer,
    checkInPlace() {
      const now = fs.statSync(file, { throwIfNoEntry: false });
      if (!now || now.ino !== opened.ino || now.dev !== opened.dev) {
        throw new DatabaseUnavailable('moved', { cause: new Error(`${file} is no longer the database file opened`) });
      }
    },
  };
}

/** Often enough that the log stays a few MB under a steady stream of writes. */
const CHECKPOINT_INTERVAL_MS = 250;

/**
 * The database layer has no logger: a failing checkpoint is a process warning (on stderr), once
 * for each new reason rather than four times a second.
 */
function warnOnce(): (message: string) => void {
  let last: string | undefined;
  return (message) => {
    if (message === last) return;
    last = message;
    process.emitWarning(`SQLite checkpoint failed (tried again in the background): ${message}`, 'CardshelfDatabaseWarning');
  };
}

/**
 * better-sqlite3's SQLite is built with SQLITE_ENABLE_STAT4, so `analyze` also stores samples
 * of index values (`sqlite_stat4`). While there are any, SQLite marks every statement whose plan
 * might depend on a bound value as expired each time a value is bound, and plans it again on
 * its next run: every query, every time, paid the whole prepare (the family read with its tag
 * counter took 33 µs so, 6.5 µs without the samples, on the bench's database). Cardshelf binds
 * every value, and its queries use their indexes whatever the value, so the per-index row
 * counts of `sqlite_stat1` are all the planner needs. The samples are dropped after each
 * `analyze` (`analyzeWithoutSamples`), and once at open for a file analyzed before.
 */
function dropValueSamples(sqlite: SQLite.Database): void {
  const hasSamples = sqlite
    .prepare("select 1 from sqlite_schema where type = 'table' and name = 'sqlite_stat4'")
    .get();
  if (!hasSamples || !sqlite.prepare('select 1 from sqlite_stat4 limit 1').get()) return;
  sqlite.exec('delete from sqlite_stat4');
  // Loads the statistics left (stat1) into the planner's view of the schema again.
  sqlite.exec('analyze sqlite_schema');
}

/** `analyze`, keeping the planner's row counts and not the value samples (see dropValueSamples). */
async function analyzeWithoutSamples(db: Kysely<Database>): Promise<void> {
  await sql`analyze`.execute(db);
  await sql`delete from sqlite_stat4`.execute(db);
  await sql`analyze sqlite_schema`.execute(db);
}

/**
 * Kysely's SQLite driver calls `prepare` for every query, so SQLite parses and plans the same
 * SQL again each time (a primary-key read took 16.8 µs so, 6.9 µs with the statement kept). The
 * routes build a bounded set of SQL texts, so statements are kept by text; better-sqlite3 runs a
 * statement synchronously to completion, so one statement is never in use twice at once, and
 * SQLite re-prepares a kept statement by itself when a migration changes the schema.
 */
function keepPreparedStatements(sqlite: SQLite.Database, max = 500): SQLite.Database {
  const statements = new LRUCache<string, SQLite.Statement>({ max });
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    let statement = statements.get(source);
    if (!statement) {
      statement = prepare(source);
      statements.set(source, statement);
    }
    return statement;
  }) as SQLite.Database['prepare'];
  return sqlite;
}

export function sqliteDialect(config: SqliteConfig): StoreDialect {
  const statements = new StatementWatch();
  /** This process's commits, for its wakers (another process's are found by their poll). */
  const commits = new EventEmitter();
  commits.setMaxListeners(0);
  return {
    name: 'sqlite',
    createKysely: () =>
      new Kysely<Database>({ dialect: new ImmediateSqliteDialect(openSqlite(config), statements, () => commits.emit('commit')) }),
    watchStatements: (listener) => statements.add(listener),
    // `begin immediate` already holds the database-wide write lock.
    lockKey: async () => {},
    lockKeyExpression: () => undefined,
    notifyOnCommit: () => undefined,
    wakeOnCommit: (_channel, wake, { pollMs }) => {
      const poll = setInterval(wake, pollMs);
      poll.unref();
      commits.on('commit', wake);
      return {
        close: async () => {
          clearInterval(poll);
          commits.off('commit', wake);
        },
      };
    },
    autoIncrementPrimaryKey: (col) => col.primaryKey().autoIncrement(),
    // SQLite compares text with BINARY unless told otherwise.
    text: 'text',
    skipLocked: false,
    pipelined: false,
    analyze: analyzeWithoutSamples,
  };
}
