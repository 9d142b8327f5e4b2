import { sql } from 'kysely';
import type { CardRowUpdate, NewCardRow } from '../../db/database.js';
import { prepared, preparedStatement } from '../../db/prepared.js';
import type { Db } from '../../db/unit-of-work.js';

/** A user's list, as the read of `GET /content/mine` needs it. */
export interface OwnList {
  /** The counter of the list's scope (0 when never written). */
  version: number;
  /** The list forms, in list order (sortkey, then cardId), as the members of a JSON array. */
  members: string;
}

/**
 * The read of a user's list of MYO cards with its change counter, in one statement compiled
 * once (db/prepared.ts), with deleted cards or without. The database joins the stored list
 * forms itself (`string_agg`, SQLite 3.44+ and PostgreSQL), in list order: one text value
 * instead of a row a card.
 */
export function ownListReads(db: Db, includeDeleted: boolean): {
  listWithVersion: (on: Db, scope: string, userId: string) => Promise<OwnList>;
} {
  const summaries = (userId: string) => {
    let query = db
      .selectFrom('cards')
      .select(sql<string | null>`string_agg(summary, ',' order by sortkey, card_id)`.as('members'))
      .where('user_id', '=', userId)
      .where('origin', '=', 'myo');
    if (!includeDeleted) query = query.where('deleted', '=', 0);
    return query;
  };
  const listWithVersion = prepared(({ scope, userId }: { scope: string; userId: string }) =>
    db.selectNoFrom((eb) => [
      eb.selectFrom('change_counters').select('version').where('scope', '=', scope).as('version'),
      summaries(userId).as('members'),
    ]),
  );
  return {
    async listWithVersion(on, scope, userId) {
      const [row] = await listWithVersion(on, { scope, userId });
      return { version: Number(row?.version ?? 0), members: row?.members ?? '' };
    },
  };
}

/** The columns a card is inserted with (its version starts at the column's default). */
type CardInsert = Required<Pick<NewCardRow, 'card_id' | 'user_id' | 'origin' | 'is_free' | 'in_club' | 'deleted' | 'sortkey' | 'created_at' | 'updated_at' | 'doc' | 'summary'>>;

const insert = preparedStatement((db, { card_id, user_id, origin, is_free, in_club, deleted, sortkey, created_at, updated_at, doc, summary }: CardInsert) =>
  db
    .insertInto('cards')
    .values({ card_id, user_id, origin, is_free, in_club, deleted, sortkey, created_at, updated_at, doc, summary })
    .onConflict((oc) => oc.column('card_id').doNothing())
    .returning('card_id'),
);

/** Inserts a card (compiled once: every card create runs it); false when the id is taken. */
export async function insertCard(db: Db, row: CardInsert): Promise<boolean> {
  const inserted = await insert(db, row);
  return inserted.length === 1;
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
