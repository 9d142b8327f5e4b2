import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.js';
import type { Store, StoreDialect } from './dialect.js';
import { markUnitRunning, type UnitConnection } from './direct-statement.js';

/** What repositories take: the database, or the transaction of a unit of work. */
export type Db = Kysely<Database> | Transaction<Database>;
/** The transaction a unit of work runs in. */
export type Trx = Transaction<Database>;

/**
 * What a unit of work serialises on: every writer of one user's or one family's data waits for
 * the unit holding its lock, in this process and in every other instance on the database.
 */
export interface Lock {
  readonly key: string;
}

/** A user's own data: their stub family, their wishlist count, their place in a family. */
export const userLock = (userId: string): Lock => ({ key: `user:${userId}` });
/** A family's data: its groups (and their count), its members and devices. */
export const familyLock = (familyId: string): Lock => ({ key: `family:${familyId}` });

/** Takes more locks inside a running unit of work (for locks that depend on what it read). */
export type LockMore = (locks: readonly Lock[]) => Promise<void>;

/**
 * A write that must commit with a unit of work or not at all, given the work's result: it runs
 * last, in the unit's transaction. The caller's record of the work goes this way, so that no
 * crash can leave one without the other: an Idempotency-Key's stored answer is written with the
 * create it replays (http/idempotency.ts).
 */
export type CommitStep<T> = (trx: Trx, result: T) => Promise<void>;

/** The keys each open transaction holds (what `holdLocks` took in it). */
const held = new WeakMap<Trx, Set<string>>();

/**
 * Takes in `trx` those of `locks` it does not hold yet, in the order of their keys (see
 * `inUnitOfWork`); a lock held already costs nothing (no statement). For a write that needs a
 * lock whatever its caller took: the live events take the lock of the user whose own event
 * they write (modules/events/publish.ts).
 */
export async function holdLocks(trx: Trx, dialect: StoreDialect, locks: readonly Lock[]): Promise<void> {
  let keys = held.get(trx);
  if (!keys) held.set(trx, (keys = new Set()));
  const taking: Promise<void>[] = [];
  for (const key of [...new Set(locks.map((l) => l.key))].sort()) {
    if (keys.has(key)) continue;
    // Sent in key order without waiting in between: the database takes them in that order (on
    // PostgreSQL, pipelined, they share a round trip).
    taking.push(dialect.lockKey(trx, key));
    keys.add(key);
  }
  await Promise.all(taking);
}

/**
 * Runs `work` in one transaction that holds `locks` from its start to its end (commit or
 * rollback releases them, so a failed request cannot leave one held). Services say what they
 * lock; the dialect says how. Locks are taken in the order of their keys, in one call and across
 * calls (`family:` before `user:`), so two units of work never wait for each other in a circle.
 * `alsoCommit`, if given, runs after `work`, in the same transaction.
 */
export function inUnitOfWork<T>(
  store: Store,
  locks: readonly Lock[],
  work: (trx: Trx, lockMore: LockMore) => Promise<T>,
  alsoCommit?: CommitStep<T>,
): Promise<T> {
  return store.db.transaction().execute(async (trx) => {
    const lock: LockMore = (more) => holdLocks(trx, store.dialect, more);
    // Its compiled statements may run directly while the work runs (db/direct-statement.ts); on
    // a pipelined store, on the transaction's connection, several at once.
    const connection = store.dialect.pipelined ? await trx.getExecutor().provideConnection(async (c) => c as unknown as UnitConnection) : undefined;
    markUnitRunning(trx, true, connection);
    try {
      // The work's first statements go out behind the locks without waiting for them: the
      // database runs them once it holds the locks, and if a lock fails, they fail with it.
      const locked = lock(locks);
      locked.catch(() => {});
      let result: T;
      try {
        result = await work(trx, lock);
      } catch (err) {
        await locked; // a lock's failure is the reason, if there was one
        throw err;
      }
      await locked;
      await alsoCommit?.(trx, result);
      return result;
    } finally {
      markUnitRunning(trx, false);
    }
  });
}
