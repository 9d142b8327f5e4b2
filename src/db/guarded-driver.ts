import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
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
  /** Called after each transaction that committed (SQLite's wakers, dialect.ts `wakeOnCommit`). */
  committed?: () => void;
  /**
   * The inner driver's connections send a statement at once even while others are on the way,
   * answered in order (node-postgres's pipeline mode). A transaction's `begin` then goes out
   * with the statements that follow it instead of in a round trip of its own (see
   * GuardedConnection), and a unit of work may send statements that do not wait for each other
   * together (unit-of-work.ts).
   */
  pipelined?: boolean;
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
const ignore = (): void => {};

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
    guarded.inTransaction = true;
    const begun = this.begin(guarded, settings);
    // Pipelined, the statements that follow go out behind the `begin` without waiting for it.
    if (this.options.pipelined) guarded.beginning(begun);
    else await begun;
  }

  /** Sends `begin` on `guarded`; on a connection found dropped, once more on a new one. */
  private async begin(guarded: GuardedConnection, settings: TransactionSettings): Promise<void> {
    try {
      await guarded.sent(this.inner.beginTransaction(guarded.inner, settings), BEGIN);
    } catch (err) {
      if (asUnavailable(err)?.reason !== 'unreachable') throw mapped(err);
      // The connection was dropped while it sat in the pool: nothing was opened on it.
      await guarded.replace();
      try {
        await guarded.sent(this.inner.beginTransaction(guarded.inner, settings), BEGIN);
      } catch (again) {
        throw mapped(again);
      }
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const guarded = connection as GuardedConnection;
    try {
      const withCommit = await guarded.allSent();
      this.options.checkWritable?.();
      const committed = guarded.sent(this.inner.commitTransaction(guarded.inner), COMMIT);
      committed.catch(ignore);
      // A statement sent to go with the commit that failed made the transaction fail, and the
      // database then ends it with a rollback (PostgreSQL answers `commit` so): its error is the
      // request's.
      const failed = (await Promise.allSettled(withCommit)).find((o) => o.status === 'rejected');
      await committed;
      if (failed) throw failed.reason;
      guarded.inTransaction = false;
    } catch (err) {
      throw mapped(err);
    }
    this.options.committed?.();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const guarded = connection as GuardedConnection;
    guarded.inTransaction = false;
    try {
      // Whatever is still on the way ends first (its failure is what led here, or comes after it).
      await Promise.allSettled(await guarded.allSent().catch(() => []));
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

  get pipelined(): boolean {
    return this.options.pipelined === true;
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

/** Transaction control, for the statement watch (their round trips count). */
const BEGIN = CompiledQuery.raw('begin');
const COMMIT = CompiledQuery.raw('commit');

/**
 * A connection of the guarded driver. Pipelined (PostgreSQL), a transaction's statements go out
 * without waiting for the ones before them, and the database answers them in order:
 * - `begin` is sent and not waited for (`beginning`): a read may follow it at once (had the
 *   `begin` failed, a read changed nothing; on a connection found dropped it is sent again
 *   with the `begin` on a new one), a write waits until the `begin` is known good, so that it
 *   can never run outside the transaction;
 * - statements a unit of work sends together (`Promise.all`) share a round trip;
 * - statements sent "with the commit" (`sendWithCommit`: the live event) are answered with it.
 * A failure of any of them fails the transaction in the database, so the statements behind it
 * fail too and the commit becomes a rollback: nothing half-done commits.
 */
class GuardedConnection implements DatabaseConnection {
  inTransaction = false;
  /** The inner driver's connection; undefined once given back and no other could be had. */
  private current: DatabaseConnection | undefined;
  /** The transaction's `begin` while it may still be on its way (pipelined only). */
  private begun: Promise<void> | undefined;
  /** Writes waiting for the `begin` before they go out: the commit must go after them. */
  private readonly unsent = new Set<Promise<void>>();
  /** Statements sent to be answered with the commit. */
  private withCommit: Promise<unknown>[] = [];
  /** The failure of one of them, once known: the reason the statements behind it fail. */
  private failure: unknown;
  /** Statements sent and not answered yet: a statement sent when there are none opens a round trip. */
  private onTheWay = 0;

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
    this.begun = undefined;
    this.unsent.clear();
    this.withCommit = [];
    this.failure = undefined;
    const connection = this.current;
    this.current = undefined;
    if (connection) await this.driver.releaseInner(connection);
  }

  /** The transaction's `begin`, sent and not waited for. */
  beginning(begun: Promise<void>): void {
    this.begun = begun;
    // Known good, it holds nothing back: statements go out in the order they are sent.
    begun.then(() => {
      if (this.begun === begun) this.begun = undefined;
    }, ignore);
  }

  /**
   * Once every statement of the transaction is on its way: those to be answered with the commit
   * (their promises); throws the `begin`'s failure.
   */
  async allSent(): Promise<Promise<unknown>[]> {
    if (this.begun) await this.begun;
    await Promise.all(this.unsent);
    const withCommit = this.withCommit;
    this.withCommit = [];
    return withCommit;
  }

  /**
   * Runs `query` now and does not wait for it: its answer comes with the commit's, which fails
   * if it failed. Only in a pipelined transaction; elsewhere this is `executeQuery`.
   */
  sendWithCommit(query: CompiledQuery): Promise<unknown> {
    const result = this.executeQuery(query);
    if (!this.driver.pipelined || !this.inTransaction) return result;
    result.catch((err: unknown) => (this.failure ??= err));
    this.withCommit.push(result);
    return Promise.resolve();
  }

  /** `sending`, a statement just sent, counted on the way until it is answered. */
  sent<T>(sending: Promise<T>, query: CompiledQuery, started = performance.now()): Promise<T> {
    // Unpipelined (SQLite), every statement is a round trip of its own: nothing to count.
    let roundTrip = true;
    if (this.driver.pipelined) {
      roundTrip = this.onTheWay++ === 0;
      const answered = (): void => {
        this.onTheWay--;
      };
      sending.then(answered, answered);
    }
    const watch = this.driver.statements;
    if (!watch?.active) return sending;
    return sending.then((result) => {
      watch.report(query, (performance.now() - started) / 1000, roundTrip);
      return result;
    });
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.run<R>(query);
  }

  private async run<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (query.parameters.some(hasNul)) throw new UnstorableText();
    const read = isRead(query);
    if (!read && !this.inTransaction) this.driver.checkWritable();
    if (this.begun) {
      if (!read) return this.afterBegin(query);
      const on = this.inner;
      const sending = this.send<R>(query);
      sending.catch(ignore);
      await this.begun;
      try {
        // The `begin` went again on a new connection (the first was found dropped): so does the read.
        return await (this.current === on ? sending : this.send<R>(query));
      } catch (err) {
        throw mapped(err);
      }
    }
    try {
      return await this.send<R>(query);
    } catch (err) {
      if (!this.inTransaction && (notSent(err) || (read && asUnavailable(err)?.reason === 'unreachable'))) {
        await this.replace();
        try {
          return await this.send<R>(query);
        } catch (again) {
          throw mapped(again);
        }
      }
      throw mapped(err);
    }
  }

  /** A write of a transaction whose `begin` may still be on its way: sent once it is known good. */
  private async afterBegin<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    let markSent = ignore;
    const sent = new Promise<void>((resolve) => (markSent = resolve));
    this.unsent.add(sent);
    let sending: Promise<QueryResult<R>>;
    try {
      await this.begun;
      this.begun = undefined;
      sending = this.send<R>(query);
    } finally {
      this.unsent.delete(sent);
      markSent();
    }
    try {
      return await sending;
    } catch (err) {
      throw mapped(err);
    }
  }

  private send<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const sending = this.sent(this.inner.executeQuery<R>(query), query);
    // Unpipelined, nothing is sent unawaited: no failure of another statement to report.
    if (!this.driver.pipelined) return sending;
    return sending.catch((err: unknown) => {
      // Refused because the transaction failed before it (PostgreSQL's 25P02): the statement
      // that made it fail, sent with the commit and not waited for, says why.
      throw (err as { code?: unknown }).code === '25P02' && this.failure !== undefined ? this.failure : err;
    });
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
