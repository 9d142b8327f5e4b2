import type { Insertable } from 'kysely';
import type { Database } from '../db/database.js';
import type { Db } from '../db/unit-of-work.js';

/** The SQL of `cardshelf seed --scale` (scale.ts): straight into the tables, portable Kysely only. */

/** One multi-row insert of `rows` into `table` (the caller keeps it below the bound values' limits). */
export async function insertRows<T extends keyof Database>(db: Db, table: T, rows: Insertable<Database[T]>[]): Promise<void> {
  // Kysely cannot type a table chosen at run time; the rows were typed by the caller.
  await db.insertInto(table).values(rows).execute();
}

/** The ids among `cardIds` that some card has already. */
export async function takenCardIds(db: Db, cardIds: readonly string[]): Promise<string[]> {
  const rows = await db.selectFrom('cards').select('card_id').where('card_id', 'in', cardIds).execute();
  return rows.map((row) => row.card_id);
}

/** Whether the user belongs to a family. */
export async function isMember(db: Db, userId: string): Promise<boolean> {
  const row = await db.selectFrom('family_memberships').select('user_id').where('user_id', '=', userId).executeTakeFirst();
  return row !== undefined;
}
