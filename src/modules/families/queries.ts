import type { Expression } from 'kysely';
import { preparedStatement } from '../../db/prepared.js';
import type { Db } from '../../db/unit-of-work.js';

/**
 * Queries of this module that other modules build on, as subqueries (so they cost no round
 * trip of their own).
 */

/** The ids of everyone who belongs to the family, listed in `members` or not (a stub's user). */
export function memberIdsOf(db: Db, familyId: string) {
  return db.selectFrom('family_memberships').select('user_id').where('family_id', '=', familyId);
}

/** The family the user belongs to (no row if none), as a subquery (of a user the statement names). */
export function familyIdOf(db: Db, userId: string | Expression<string>) {
  return db.selectFrom('family_memberships').select('family_id').where('user_id', '=', userId);
}

const familyIdStatement = preparedStatement((db, { userId }: { userId: string }) => familyIdOf(db, userId));

/**
 * The family the user belongs to, if any (read on `db`, or in the caller's transaction);
 * compiled once (db/prepared.ts): every family write and every MYO card's write reads it.
 */
export async function familyIdOfUser(db: Db, userId: string): Promise<string | undefined> {
  const [row] = await familyIdStatement(db, { userId });
  return row?.family_id;
}

/** Whether a family with this id exists. */
export async function familyExists(db: Db, familyId: string): Promise<boolean> {
  const row = await db.selectFrom('families').select('family_id').where('family_id', '=', familyId).executeTakeFirst();
  return row !== undefined;
}
