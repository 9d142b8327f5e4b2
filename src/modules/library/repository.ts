import type { LibraryRecordRow } from '../../db/database.js';
import type { Db } from '../../db/unit-of-work.js';

/** Inserts the record unless the family already holds the card; true when it was inserted. */
export async function insertRecordIfAbsent(db: Db, row: LibraryRecordRow): Promise<boolean> {
  const result = await db
    .insertInto('library_records')
    .values(row)
    .onConflict((oc) => oc.columns(['family_id', 'card_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function findRecord(db: Db, familyId: string, cardId: string): Promise<LibraryRecordRow | undefined> {
  return db
    .selectFrom('library_records')
    .selectAll()
    .where('family_id', '=', familyId)
    .where('card_id', '=', cardId)
    .executeTakeFirst();
}

/** Every family's record of a card (the families whose library holds it), in family order. */
export async function recordsOfCard(db: Db, cardId: string): Promise<Pick<LibraryRecordRow, 'family_id' | 'record_id'>[]> {
  return db.selectFrom('library_records').select(['family_id', 'record_id']).where('card_id', '=', cardId).orderBy('family_id').execute();
}
