import type { LibraryRecordRow } from '../../db/database.js';
import { preparedStatement } from '../../db/prepared.js';
import type { Db } from '../../db/unit-of-work.js';
import { familyIdOf } from '../families/queries.js';

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

// The user's family as the families module reads it (familyIdOf), with its record of the card.
const familyRecordStatement = preparedStatement((db, { userId, cardId }: { userId: string; cardId: string }) =>
  db
    .selectFrom(familyIdOf(db, userId).as('m'))
    .leftJoin('library_records as r', (join) => join.onRef('r.family_id', '=', 'm.family_id').on('r.card_id', '=', cardId))
    .select(['m.family_id as of_family', 'r.record_id', 'r.family_id', 'r.card_id', 'r.provenance_id', 'r.reason', 'r.created_at', 'r.updated_at']),
);

/**
 * The user's family and its record of the card, in one read (an add's first question):
 * undefined when the user has no family, `record` undefined when the family does not hold it.
 */
export async function familyRecordOf(
  db: Db,
  userId: string,
  cardId: string,
): Promise<{ familyId: string; record: LibraryRecordRow | undefined } | undefined> {
  const [row] = await familyRecordStatement(db, { userId, cardId });
  if (!row) return undefined;
  const { of_family: familyId, ...record } = row;
  return { familyId, record: record.record_id === null ? undefined : (record as LibraryRecordRow) };
}

/** Every family's record of a card (the families whose library holds it), in family order. */
export async function recordsOfCard(db: Db, cardId: string): Promise<Pick<LibraryRecordRow, 'family_id' | 'record_id'>[]> {
  return db.selectFrom('library_records').select(['family_id', 'record_id']).where('card_id', '=', cardId).orderBy('family_id').execute();
}
