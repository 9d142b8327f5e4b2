import type {
  CompiledQuery,
  DatabaseConnection,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';
import { asUnavailable, DatabaseUnavailable, UnstorableText } from './errors.js';
import type { StatementWatch } from './statement-watch.js';

/** What a dialect adds to the guard. */
export interface DriverGuardOptions {
  /**
   * Throws a DatabaseUnavailable when a write must not be made durable now (the SQLite file was
   * moved or deleted). Asked before a transaction commits and before a write outside one.
   */
  checkWritable?: () => void;
  /**
   * How long a connection that could not be made, or was found dropped, is tried again before
   * the request fails: only where nothing can have reached the database (see below).
   */
  reconnectWindowMs: number;
  /** Told of every statement that succeeded, with its time (metrics, statement counts). */
  statements?: StatementWatch;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  return Array.isArray(value) && value.some(hasNul);
}

/** A statement that cannot change data: retrying it after a dropped connection is safe. */
export function isRead(query: CompiledQuery): boolean {
  const kind = query.query.kind;
  return kind === 'SelectQueryNode' || (kind === 'RawNode' && /^\s*select\b/i.test(query.sql));
}

const mapped = (err: unknown): unknown => asUnavailable(err) ?? err;

/**
 * node-postgres refuses a statement on a connection it already knows is broken without sending
 * it: even a write may then be sent again on another connection.
 */
const notSent = (err: unknown): boolean => err instanceof Error && /not queryable/.test(err.message);

/**
 * Wraps a dialect's driver so that what the database layer hands up is its own: failures of the
 * database become DatabaseUnavailable (the edge answers 503), NUL in a text parameter
 * UnstorableText (400). It also rides out what can be ridden out without risk:
 * - a connection that cannot be made is tried again for `reconnectWindowMs` (nothing was sent);
 * - a connection found dropped when a read or a `begin` runs on it is replaced once, and the
 *   statement sent again (a read changes nothing; a `begin` that failed opened nothing); so is
 *   any statement outside a transaction that the client refused to send on a broken connection.
 * A write or a statement inside a transaction is never sent twice: whether it took effect is
 * unknown, so the request fails and the client decides.
 */
export class GuardedDriver implements Driver {
  /** Connections handed out and not given back yet. */
  #out = 0;

  constructor(
    private readonly inner: Driver,
    private readonly options: DriverGuardOptions,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = new GuardedConnection(this, await this.acquireInner());
    this.#out++;
    return connection;
  }

  /** Whether any connection is out: on SQLite's single connection, whether it is in use. */
  get busy(): boolean {
    return this.#out > 0;
  }

  /**
   * A statement run synchronously by `run` outside the connections (see db/direct-statement.ts), guarded as
   * a statement on a connection is: NUL refused, failures mapped, the time reported.
   */
  runNow<R>(query: CompiledQuery, run: () => R[]): R[] {
    if (query.parameters.some(hasNul)) throw new UnstorableText();
    const watch = this.options.statements;
    const started = watch?.active ? performance.now() : 0;
    let rows: R[];
    try {
      rows = run();
    } catch (err) {
      throw mapped(err);
    }
    if (watch?.active) watch.report(query, (performance.now() - started) / 1000);
    return rows;
  }

  /** A connection of the inner driver, retried while the database cannot be reached. */
  async acquireInner(): Promise<DatabaseConnection> {
    const deadline = Date.now() + this.options.reconnectWindowMs;
    for (let pause = 50; ; pause = Math.min(pause * 2, 400)) {
      try {
        return await this.inner.acquireConnection();
      } catch (err) {
        const failure = asUnavailable(err);
        if (failure?.reason !== 'unreachable' || Date.now() + pause > deadline) throw failure ?? err;
        await sleep(pause);
      }
    }
  }

  /** Gives a connection back; a dropped one is not reused (node-postgres discards it). */
  async releaseInner(connection: DatabaseConnection): Promise<void> {
    await this.inner.releaseConnection(connection);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const guarded = connection as GuardedConnection;
    try {
      await this.inner.beginTransaction(guarded.inner, settings);
    } catch (err) {
      if (asUnavailable(err)?.reason !== 'unreachable') throw mapped(err);
      // The connection was dropped while it sat in the pool: nothing was opened on it.
      await guarded.replace();
      try {
        await this.inner.beginTransaction(guarded.inner, settings);
      } catch (again) {
        throw mapped(again);
      }
    }
    guarded.inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const guarded = connection as GuardedConnection;
    try {
      this.options.checkWritable?.();
      await this.inner.commitTransaction(guarded.inner);
      guarded.inTransaction = false;
    } catch (err) {
      throw mapped(err);
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const guarded = connection as GuardedConnection;
    guarded.inTransaction = false;
    try {
      await this.inner.rollbackTransaction(guarded.inner);
    } catch {
      // Nothing left to roll back: a connection that is gone rolled back by itself, and SQLite
      // ends a transaction by itself on some errors (SQLITE_FULL, SQLITE_IOERR). The error that
      // led here, which Kysely throws once this returns, says what happened.
    }
  }

  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.delegate((c) => this.inner.savepoint?.(c, name, compile), connection);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.delegate((c) => this.inner.rollbackToSavepoint?.(c, name, compile), connection);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.delegate((c) => this.inner.releaseSavepoint?.(c, name, compile), connection);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.#out--;
    await (connection as GuardedConnection).release();
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }

  checkWritable(): void {
    this.options.checkWritable?.();
  }

  get statements(): StatementWatch | undefined {
    return this.options.statements;
  }

  private async delegate(
    run: (inner: DatabaseConnection) => Promise<void> | undefined,
    connection: DatabaseConnection,
  ): Promise<void> {
    try {
      await run((connection as GuardedConnection).inner);
    } catch (err) {
      throw mapped(err);
    }
  }
}

class GuardedConnection implements DatabaseConnection {
  inTransaction = false;
  /** The inner driver's connection; undefined once given back and no other could be had. */
  private current: DatabaseConnection | undefined;

  constructor(
    private readonly driver: GuardedDriver,
    inner: DatabaseConnection,
  ) {
    this.current = inner;
  }

  get inner(): DatabaseConnection {
    if (!this.current) throw new DatabaseUnavailable('unreachable');
    return this.current;
  }

  /** Swaps a dropped connection for a new one (not inside a transaction: that died with it). */
  async replace(): Promise<void> {
    const dropped = this.inner;
    // Given back before the new one is asked for: if none can be had, Kysely's own release of
    // this connection must not give the dropped one back a second time.
    this.current = undefined;
    await this.driver.releaseInner(dropped);
    this.current = await this.driver.acquireInner();
  }

  /** Gives the inner connection back, once. */
  async release(): Promise<void> {
    const connection = this.current;
    this.current = undefined;
    if (connection) await this.driver.releaseInner(connection);
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const watch = this.driver.statements;
    if (!watch?.active) return this.run(query);
    const started = performance.now();
    const result = await this.run<R>(query);
    watch.report(query, (performance.now() - started) / 1000);
    return result;
  }

  private async run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (query.parameters.some(hasNul)) throw new UnstorableText();
    const read = isRead(query);
    if (!read && !this.inTransaction) this.driver.checkWritable();
    try {
      return await this.inner.executeQuery<R>(query);
    } catch (err) {
      if (!this.inTransaction && (notSent(err) || (read && asUnavailable(err)?.reason === 'unreachable'))) {
        await this.replace();
        try {
          return await this.inner.executeQuery<R>(query);
        } catch (again) {
          throw mapped(again);
        }
      }
      throw mapped(err);
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    if (query.parameters.some(hasNul)) throw new UnstorableText();
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (err) {
      throw mapped(err);
    }
  }
}
