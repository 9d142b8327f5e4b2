import type { ColumnDataType, ColumnDefinitionBuilder, Expression, Kysely, RawBuilder, Transaction } from 'kysely';
import type { Database } from './database.js';
import type { StatementListener } from './statement-watch.js';

/**
 * Everything that differs between the databases Cardshelf runs on, in one place. Queries,
 * repositories and migrations ask this object instead of testing which database they are on.
 */
export interface StoreDialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * Builds the Kysely instance (and its connection or pool), its driver wrapped by
   * GuardedDriver: database failures come out as DatabaseUnavailable.
   */
  createKysely(): Kysely<Database>;
  /**
   * Serialises the writers of one key (a user, a family) until the transaction ends, so that a
   * check-then-insert (a count limit, a stub family) holds under concurrency, across processes.
   */
  lockKey(trx: Transaction<Database>, key: string): Promise<void>;
  /**
   * `lockKey`'s lock as an SQL expression that takes it when a statement evaluates it, for a
   * write that can take its lock in the statement that needs it instead of in a round trip of
   * its own; undefined where `lockKey` takes nothing (SQLite). `key` is an SQL expression of the
   * key's text (a parameter, or computed from the rows the statement reads): the lock is the
   * one `lockKey` takes for that text.
   */
  lockKeyExpression(key: Expression<string>): RawBuilder<unknown> | undefined;
  /**
   * An expression that, evaluated by a statement, has the database wake `channel`'s wakers
   * (`wakeOnCommit`) on every instance when the statement's transaction commits (PostgreSQL's
   * pg_notify, sent at commit); undefined where there is none (SQLite: its wakers poll).
   */
  notifyOnCommit(channel: string): RawBuilder<unknown> | undefined;
  /**
   * Calls `wake` soon after a transaction that notified `channel` commits, on any instance:
   * PostgreSQL listens on a connection of its own, and wakes too each time it starts listening
   * (what was sent before was not heard); SQLite polls every `pollMs`, and wakes after each of
   * this process's commits. A wake may find nothing new: the caller reads what it follows.
   */
  wakeOnCommit(channel: string, wake: () => void, opts: { pollMs: number; onError: (err: unknown) => void }): Waker;
  /** Turns a column definition into an auto-incrementing integer primary key. */
  autoIncrementPrimaryKey(col: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /**
   * The type of every text column: text that sorts and compares byte by byte (code point
   * order), whatever collation the database was created with. Lists are ordered by text
   * columns (sortkey, ids, ISO timestamps), and their order must not depend on the database.
   */
  readonly text: ColumnDataType | Expression<unknown>;
  /**
   * `select ... for update skip locked` is available: workers claiming queued jobs at once skip
   * each other's rows. Without it (SQLite) a claiming statement holds the write lock instead.
   */
  readonly skipLocked: boolean;
  /**
   * Statements of one connection go out without waiting for those before them (PostgreSQL's
   * pipelining, guarded-driver.ts): a unit of work's statements sent together share a round trip.
   */
  readonly pipelined: boolean;
  /**
   * Gathers fresh statistics for the query planner, after a bulk load (an import, the scale
   * seed). On SQLite without the value samples that would make every statement re-planned on
   * each run (see sqlite.ts).
   */
  analyze(db: Kysely<Database>): Promise<void>;
  /**
   * Calls `listener` after every statement the store's connections run (timing and counting);
   * the function returned stops it.
   */
  watchStatements(listener: StatementListener): () => void;
  /** The connection pool's use, where there is one (PostgreSQL), for the metrics. */
  poolStats?(): PoolStats;
}

/** What `wakeOnCommit` started, until closed. */
export interface Waker {
  close(): Promise<void>;
}

export interface PoolStats {
  /** Connections open, idle among them, and checkouts waiting for one. */
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: StoreDialect;
}
