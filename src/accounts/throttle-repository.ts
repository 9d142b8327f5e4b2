import type { ThrottleCountersTable } from '../db/database.js';
import type { Db } from '../db/unit-of-work.js';

/** The SQL of `throttle_counters` (src/accounts/throttle.ts, which holds the locks). */

export function findCounters(db: Db, keys: readonly string[]): Promise<ThrottleCountersTable[]> {
  return db.selectFrom('throttle_counters').selectAll().where('key', 'in', keys).execute();
}

export function findCounter(db: Db, key: string): Promise<ThrottleCountersTable | undefined> {
  return db.selectFrom('throttle_counters').selectAll().where('key', '=', key).executeTakeFirst();
}

/** When each of the counters is locked until (ISO), for those that exist. */
export function lockedUntilOf(db: Db, keys: readonly string[]): Promise<Pick<ThrottleCountersTable, 'locked_until'>[]> {
  return db.selectFrom('throttle_counters').select('locked_until').where('key', 'in', keys).execute();
}

export async function insertCounter(db: Db, row: ThrottleCountersTable): Promise<void> {
  await db.insertInto('throttle_counters').values(row).execute();
}

export async function updateCounter(db: Db, key: string, fields: Partial<Omit<ThrottleCountersTable, 'key'>>): Promise<void> {
  await db.updateTable('throttle_counters').set(fields).where('key', '=', key).execute();
}

export async function deleteCounter(db: Db, key: string): Promise<void> {
  await db.deleteFrom('throttle_counters').where('key', '=', key).execute();
}

/** Removes the counters last added to before `before` (ISO); returns how many. */
export async function deleteCountersIdleSince(db: Db, before: string): Promise<number> {
  const result = await db.deleteFrom('throttle_counters').where('last_attempt_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
