import type { CompiledQuery, DialectAdapter } from 'kysely';
import type { Db } from './unit-of-work.js';

/**
 * A read that a store can answer at once, on the spot, without Kysely's connection handling:
 * the rows, or undefined when it cannot now (the caller then goes the usual way).
 *
 * On SQLite a statement runs synchronously on the one connection, yet Kysely still takes it
 * through a dozen promises for each query (acquire the connection behind a mutex, run, give it
 * back): as much CPU as the read itself for a small answer. While no one holds that connection
 * (no transaction open, no query of Kysely's under way), a read can run directly with the same
 * result. PostgreSQL has none: its reads need a round trip anyway.
 */
export type DirectRead = (query: CompiledQuery) => unknown[] | undefined;

/** By dialect adapter: a Kysely instance's transactions share its adapter but not its freedom. */
const readers = new WeakMap<DialectAdapter, DirectRead>();

export function registerDirectRead(adapter: DialectAdapter, read: DirectRead): void {
  readers.set(adapter, read);
}

/**
 * The direct read for queries on `db`: never inside a transaction, whose statements must run on
 * its own connection, in its order.
 */
export function directReadOf(db: Db): DirectRead | undefined {
  return db.isTransaction ? undefined : readers.get(db.getExecutor().adapter);
}
