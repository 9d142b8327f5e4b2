import type { CompiledQuery, DialectAdapter, Kysely, QueryResult } from 'kysely';
import type { Database } from './database.js';

/** What a statement runs on: the database or a transaction (unit-of-work.ts's Db, which uses this module). */
type Db = Pick<Kysely<Database>, 'isTransaction' | 'getExecutor'>;

/**
 * A compiled statement that a store can run at once, on the spot, without Kysely's connection
 * handling: its rows (none for a write without RETURNING), or undefined when it cannot now (the
 * caller then goes the usual way).
 *
 * On SQLite a statement runs synchronously on the one connection, yet Kysely still takes it
 * through a dozen promises for each query (acquire the connection behind a mutex, run, give it
 * back): as much CPU as the statement itself for a small one. Two places can skip that:
 * - a read on the database while no one holds the connection (no transaction open, no query of
 *   Kysely's under way), which sees what a read through Kysely would;
 * - any statement of a unit of work while its work runs (db/unit-of-work.ts): its transaction
 *   holds the connection from `begin` to the end, and its statements run in the order it
 *   awaits them either way.
 * PostgreSQL has neither: its statements need a round trip anyway.
 */
export type DirectStatement = (query: CompiledQuery) => unknown[] | undefined;

interface DirectRunners {
  /** A read on the database, outside any transaction. */
  read: DirectStatement;
  /** A statement of the transaction of a unit of work whose work is running. */
  inUnit: DirectStatement;
}

/** By dialect adapter: a Kysely instance's transactions share its adapter but not its freedom. */
const runners = new WeakMap<DialectAdapter, DirectRunners>();

/**
 * The transactions of units of work whose work is running. Not any transaction: a handle kept
 * past its unit's end must not run on the connection, where another unit's transaction may be
 * open by then.
 */
const runningUnits = new WeakSet<Db>();

export function registerDirectStatements(adapter: DialectAdapter, direct: DirectRunners): void {
  runners.set(adapter, direct);
}

/**
 * The connection of a running unit of work on a pipelined store (PostgreSQL; see
 * guarded-driver.ts): statements sent on it go out at once, not one after another as Kysely
 * sends a transaction's (it waits for each statement before the next), so those that a unit of
 * work sends together (`Promise.all`) share a round trip.
 */
export interface UnitConnection {
  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>>;
  /** Sends `query`, to be answered with the commit (which fails if it fails). */
  sendWithCommit(query: CompiledQuery): Promise<unknown>;
}

const unitConnections = new WeakMap<Db, UnitConnection>();

/**
 * Marks `trx` as its unit's running work (true) or ended (false): db/unit-of-work.ts. On a
 * pipelined store, with the unit's connection.
 */
export function markUnitRunning(trx: Db, running: boolean, connection?: UnitConnection): void {
  if (running) {
    runningUnits.add(trx);
    if (connection) unitConnections.set(trx, connection);
  } else {
    runningUnits.delete(trx);
    unitConnections.delete(trx);
  }
}

/** The connection of the running unit of work whose transaction is `db`, on a pipelined store. */
export function unitConnectionOf(db: Db): UnitConnection | undefined {
  return db.isTransaction ? unitConnections.get(db) : undefined;
}

/** How a compiled statement on `db` may run directly, if it may. */
export function directStatementOf(db: Db): DirectStatement | undefined {
  const direct = runners.get(db.getExecutor().adapter);
  if (!direct) return undefined;
  if (!db.isTransaction) return direct.read;
  return runningUnits.has(db) ? direct.inUnit : undefined;
}
