import type { PasskeyChallengesTable, PasskeysTable } from '../db/database.js';
import type { Db } from '../db/unit-of-work.js';

/** The SQL of `passkeys` and `passkey_challenges` (src/accounts/passkeys.ts). */

export async function insertChallenge(db: Db, row: PasskeyChallengesTable): Promise<void> {
  await db.insertInto('passkey_challenges').values(row).execute();
}

/** Deletes the challenge if it was handed out for this purpose and subject and is good after `now` (ISO); whether it was. */
export async function deleteGoodChallenge(db: Db, challenge: Omit<PasskeyChallengesTable, 'expires_at'>, now: string): Promise<boolean> {
  const result = await db
    .deleteFrom('passkey_challenges')
    .where('challenge', '=', challenge.challenge)
    .where('purpose', '=', challenge.purpose)
    .where('subject', '=', challenge.subject)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Removes the challenges expired before `now` (ISO); returns how many. */
export async function deleteExpiredChallenges(db: Db, now: string): Promise<number> {
  const result = await db.deleteFrom('passkey_challenges').where('expires_at', '<', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The user's passkeys, oldest first. */
export function listPasskeys(db: Db, userId: string): Promise<PasskeysTable[]> {
  return db.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
}

/** The ids and transports of the user's passkeys (what a new one must not repeat). */
export function credentialsOf(db: Db, userId: string): Promise<Pick<PasskeysTable, 'id' | 'transports'>[]> {
  return db.selectFrom('passkeys').select(['id', 'transports']).where('user_id', '=', userId).execute();
}

export async function countPasskeys(db: Db, userId: string): Promise<number> {
  const row = await db.selectFrom('passkeys').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export function findPasskey(db: Db, id: string): Promise<PasskeysTable | undefined> {
  return db.selectFrom('passkeys').selectAll().where('id', '=', id).executeTakeFirst();
}

/** False when a passkey with this id exists already. */
export async function insertPasskey(db: Db, row: PasskeysTable): Promise<boolean> {
  const result = await db
    .insertInto('passkeys')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function markPasskeyUsed(db: Db, id: string, counter: number, usedAt: string): Promise<void> {
  await db.updateTable('passkeys').set({ counter, last_used_at: usedAt }).where('id', '=', id).execute();
}

/** Whether the user had a passkey by that id. */
export async function deletePasskey(db: Db, userId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('passkeys').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
