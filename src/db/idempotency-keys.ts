import type { Selectable } from 'kysely';
import type { IdempotencyKeysTable } from './database.js';
import type { Db } from './unit-of-work.js';

/** The stored first answers of POSTs sent with an `Idempotency-Key` (see http/idempotency.ts). */
export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;

export interface KeyClaim {
  userId: string;
  key: string;
  fingerprint: string;
  /** When the claiming request started (ISO): also its claim's identity for the writes below. */
  at: string;
}

/** Claims the key for a request to run; false when the user already has it. The primary key decides races. */
export async function claimKey(db: Db, claim: KeyClaim): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({
      user_id: claim.userId,
      idempotency_key: claim.key,
      fingerprint: claim.fingerprint,
      state: 'in-flight',
      created_at: claim.at,
      claimed_at: claim.at,
    })
    .onConflict((oc) => oc.columns(['user_id', 'idempotency_key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function findKey(db: Db, userId: string, key: string): Promise<IdempotencyKeyRow | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

/**
 * Claims a key whose earlier use expired or was abandoned, if `seen` is still what is stored:
 * of several requests taking over at once, one succeeds.
 */
export async function takeOverKey(db: Db, seen: IdempotencyKeyRow, claim: KeyClaim): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({
      fingerprint: claim.fingerprint,
      state: 'in-flight',
      status: null,
      content_type: null,
      body: null,
      created_at: claim.at,
      claimed_at: claim.at,
    })
    .where('user_id', '=', claim.userId)
    .where('idempotency_key', '=', claim.key)
    .where('state', '=', seen.state)
    .where('claimed_at', '=', seen.claimed_at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Stores the answer of the request holding the claim; false when it no longer holds it (its
 * lease ran out and another request took the key over).
 */
export async function completeKey(
  db: Db,
  claim: KeyClaim,
  answer: { status: number; contentType: string | null; body: string },
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', status: answer.status, content_type: answer.contentType, body: answer.body })
    .where('user_id', '=', claim.userId)
    .where('idempotency_key', '=', claim.key)
    .where('state', '=', 'in-flight')
    .where('claimed_at', '=', claim.at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives the key up (the request failed on the server's side): a retry runs again. */
export async function releaseKey(db: Db, claim: KeyClaim): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('user_id', '=', claim.userId)
    .where('idempotency_key', '=', claim.key)
    .where('state', '=', 'in-flight')
    .where('claimed_at', '=', claim.at)
    .execute();
}

/** Removes the keys created before `before` (ISO); how many. */
export async function sweepKeys(db: Db, before: string): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
