import type { CardRowUpdate, NewCardRow } from '../../db/database.js';
import type { Db } from '../../db/unit-of-work.js';

/** The list forms of a user's MYO cards, in list order (sortkey, then cardId). */
export async function listSummariesByOwner(db: Db, userId: string, includeDeleted: boolean): Promise<string[]> {
  let query = db
    .selectFrom('cards')
    .select('summary')
    .where('user_id', '=', userId)
    .where('origin', '=', 'myo');
  if (!includeDeleted) query = query.where('deleted', '=', 0);
  const rows = await query.orderBy('sortkey').orderBy('card_id').execute();
  return rows.map((r) => r.summary);
}

/** Inserts a card; false when the id is taken. */
export async function insertCard(db: Db, row: NewCardRow): Promise<boolean> {
  const result = await db
    .insertInto('cards')
    .values(row)
    .onConflict((oc) => oc.column('card_id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Writes the card's new state and bumps its version; returns the new version. */
export async function updateCard(db: Db, cardId: string, changes: CardRowUpdate): Promise<number> {
  const row = await db
    .updateTable('cards')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
    .where('card_id', '=', cardId)
    .returning('version')
    .executeTakeFirstOrThrow();
  return row.version;
}
