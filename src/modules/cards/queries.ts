import type { CardRow } from '../../db/database.js';
import type { Db } from '../../db/unit-of-work.js';

/** Queries of this module that other modules build on (the library's add reads the card). */

/** The card with this id, of any origin, deleted or not; undefined when there is none. */
export async function findCard(db: Db, cardId: string): Promise<CardRow | undefined> {
  return db.selectFrom('cards').selectAll().where('card_id', '=', cardId).executeTakeFirst();
}

/** The cards with these ids that exist (any origin, deleted or not), in no particular order. */
export async function findCards(db: Db, cardIds: readonly string[]): Promise<CardRow[]> {
  const ids = [...new Set(cardIds)];
  if (ids.length === 0) return [];
  return db.selectFrom('cards').selectAll().where('card_id', 'in', ids).execute();
}
