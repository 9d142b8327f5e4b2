import type { LibraryRecordRow } from '../../db/database.js';
import { preparedStatement } from '../../db/prepared.js';
import type { Db } from '../../db/unit-of-work.js';
import { CARD_HEAD_COLUMNS, type CardHead } from '../cards/queries.js';
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

// The card's head, the user's family as the families module reads it (familyIdOf), and the
// family's record of the card.
const addFactsStatement = preparedStatement((db, { userId, cardId }: { userId: string; cardId: string }) =>
  db
    .selectFrom('cards as c')
    .leftJoin(familyIdOf(db, userId).as('m'), (join) => join.onTrue())
    .leftJoin('library_records as r', (join) => join.onRef('r.family_id', '=', 'm.family_id').onRef('r.card_id', '=', 'c.card_id'))
    .select(CARD_HEAD_COLUMNS.map((column) => `c.${column}` as const))
    .select(['m.family_id as of_family', 'r.record_id', 'r.provenance_id', 'r.reason', 'r.created_at as record_created_at', 'r.updated_at as record_updated_at'])
    .where('c.card_id', '=', cardId),
);

/** What an add decides on (library/service.ts): the card, the caller's family, its record of the card. */
export interface AddFacts {
  card: CardHead;
  /** Undefined when the user has no family. */
  familyId: string | undefined;
  /** Undefined when the family does not hold the card by a record. */
  record: LibraryRecordRow | undefined;
}

/** An add's first question, in one read: undefined when there is no such card. */
export async function addFacts(db: Db, userId: string, cardId: string): Promise<AddFacts | undefined> {
  const [row] = await addFactsStatement(db, { userId, cardId });
  if (!row) return undefined;
  const { of_family: familyId, record_id, provenance_id, reason, record_created_at, record_updated_at, ...card } = row;
  const record =
    familyId !== null && record_id !== null
      ? { record_id, family_id: familyId, card_id: cardId, provenance_id, reason, created_at: record_created_at, updated_at: record_updated_at }
      : undefined;
  return { card, familyId: familyId ?? undefined, record: record as LibraryRecordRow | undefined };
}

/** Every family's record of a card (the families whose library holds it), in family order. */
export async function recordsOfCard(db: Db, cardId: string): Promise<Pick<LibraryRecordRow, 'family_id' | 'record_id'>[]> {
  return db.selectFrom('library_records').select(['family_id', 'record_id']).where('card_id', '=', cardId).orderBy('family_id').execute();
}
