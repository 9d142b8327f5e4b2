import type { Kysely, Transaction } from 'kysely';
import type { Database, LibraryRecordRow } from '../../db/database.js';

type Db = Kysely<Database> | Transaction<Database>;

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

export async function holdsCard(db: Db, familyId: string, cardId: string): Promise<boolean> {
  const row = await db
    .selectFrom('library_records')
    .select('record_id')
    .where('family_id', '=', familyId)
    .where('card_id', '=', cardId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Which of `cardIds` the family's library holds, as its list shows it, with each held card's
 * full document (card id -> doc JSON): a card deleted by its owner has left the library (see
 * listWithSummaries), so it is not held. Groups check their items and render them from this one
 * read.
 */
export async function heldCardDocs(
  db: Db,
  familyId: string,
  cardIds: readonly string[],
): Promise<Map<string, string>> {
  if (cardIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('library_records as r')
    .innerJoin('cards as c', 'c.card_id', 'r.card_id')
    .select(['r.card_id', 'c.doc'])
    .where('r.family_id', '=', familyId)
    .where('r.card_id', 'in', [...new Set(cardIds)])
    .where('c.deleted', '=', 0)
    .execute();
  return new Map(rows.map((r) => [r.card_id, r.doc]));
}

/** The family's library in the order cards were added, with each card's list form. */
export async function listWithSummaries(
  db: Db,
  familyId: string,
): Promise<{ card_id: string; created_at: string; summary: string }[]> {
  return db
    .selectFrom('library_records as r')
    .innerJoin('cards as c', 'c.card_id', 'r.card_id')
    .select(['r.card_id', 'r.created_at', 'c.summary'])
    .where('r.family_id', '=', familyId)
    // A card deleted by its owner leaves every library it was in, as it leaves the owner's list.
    .where('c.deleted', '=', 0)
    .orderBy('r.created_at')
    .orderBy('r.record_id')
    .execute();
}
