import type { CardRow } from '../../db/database.js';
import { preparedStatement } from '../../db/prepared.js';
import type { Db } from '../../db/unit-of-work.js';

/** Queries of this module that other modules build on (the library's add reads the card). */

/**
 * What a card's tag, its read policy (access.ts) and a library add's rules (library/rules.ts)
 * need: its row without the document and list form.
 */
export const CARD_HEAD_COLUMNS = ['card_id', 'user_id', 'origin', 'is_free', 'in_club', 'deleted', 'version', 'created_at'] as const;
export type CardHead = Pick<CardRow, (typeof CARD_HEAD_COLUMNS)[number]>;

// Compiled once (db/prepared.ts): every card read and write runs one of them.
const cardById = preparedStatement((db, { cardId }: { cardId: string }) => db.selectFrom('cards').selectAll().where('card_id', '=', cardId));
const headById = preparedStatement(
  (db, { cardId }: { cardId: string }) =>
    db.selectFrom('cards').select(CARD_HEAD_COLUMNS).where('card_id', '=', cardId),
);

/** The card with this id, of any origin, deleted or not; undefined when there is none. */
export async function findCard(db: Db, cardId: string): Promise<CardRow | undefined> {
  const [row] = await cardById(db, { cardId });
  return row;
}

/**
 * `findCard` without the stored document: for a read that decides on its tag first and may
 * answer without the document (a 304, or an answer kept under that tag).
 */
export async function findCardHead(db: Db, cardId: string): Promise<CardHead | undefined> {
  const [row] = await headById(db, { cardId });
  return row;
}

/** The cards with these ids that exist (any origin, deleted or not), in no particular order. */
export async function findCards(db: Db, cardIds: readonly string[]): Promise<CardRow[]> {
  const ids = [...new Set(cardIds)];
  if (ids.length === 0) return [];
  return db.selectFrom('cards').selectAll().where('card_id', 'in', ids).execute();
}
