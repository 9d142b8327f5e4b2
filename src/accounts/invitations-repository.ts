import type { Kysely, Transaction } from 'kysely';
import type { Database, InvitationsTable } from '../db/database.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The SQL of invitations (src/accounts/invitations.ts). "Open": neither used nor expired at `now` (ISO). */

export async function insertInvitation(db: Db, row: InvitationsTable): Promise<void> {
  await db.insertInto('invitations').values(row).execute();
}

export function findInvitation(db: Db, secretHash: string): Promise<InvitationsTable | undefined> {
  return db.selectFrom('invitations').selectAll().where('secret_hash', '=', secretHash).executeTakeFirst();
}

export async function countOpenBy(db: Db, inviterId: string, now: string): Promise<number> {
  const row = await db
    .selectFrom('invitations')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('invited_by', '=', inviterId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The family's open invitations, the soonest to expire first. */
export function listOpenOfFamily(db: Db, familyId: string, now: string): Promise<InvitationsTable[]> {
  return db
    .selectFrom('invitations')
    .selectAll()
    .where('family_id', '=', familyId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('expires_at')
    .orderBy('secret_hash')
    .execute();
}

/** Removes an open invitation of the family; whether there was one. */
export async function deleteOpen(db: Db, familyId: string, secretHash: string, now: string): Promise<boolean> {
  const result = await db
    .deleteFrom('invitations')
    .where('secret_hash', '=', secretHash)
    .where('family_id', '=', familyId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Marks the invitation used, if nobody did first; whether this call did. */
export async function spend(db: Db, secretHash: string, usedAt: string, usedBy: string | null): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ used_at: usedAt, used_by: usedBy })
    .where('secret_hash', '=', secretHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}
