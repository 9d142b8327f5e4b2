import { sql } from 'kysely';
import type { CardRow } from '../db/database.js';
import type { Db } from '../db/unit-of-work.js';
import type { memberIdsOf } from '../modules/families/queries.js';
import type { RowFilter } from './table-reader.js';

/**
 * The SQL of export and import that names its tables: the rows a family's archive takes (as
 * filters for table-reader.ts), and the reads of the import's checks. Every `in` list is the
 * caller's chunk (at most IN_LIST_CHUNK values).
 */

/** The ids of a family's members, as a subquery (families/queries.ts). */
type Members = ReturnType<typeof memberIdsOf>;

/** Rows of the engine's records of one model (`oauth_records`: accounts.ts). */
export function rowsOfModel(model: string): RowFilter {
  return { where: sql`model = ${model}` };
}

/** Rows of any of the members (`user_id`). */
export function rowsOfUsers(members: Members): RowFilter {
  return { where: sql`user_id in (${members})` };
}

/** The filters of a family's archive that exporter.ts's familyFilters hands out by table. */
export interface FamilyRowFilters {
  /** Rows of the family (`family_id`). */
  ofFamily: RowFilter;
  /** Rows of every member for the operator (no reader), or of the reader alone (`user_id`). */
  ofOwners: RowFilter;
  /**
   * MYO cards: every member's, deleted ones included, for the operator; for a reader, their own
   * and every member's live ones.
   */
  cards: RowFilter;
  /** Media holdings of the family and of every member (the operator), or of the reader alone. */
  holdings: RowFilter;
  /** The card pairings (`link_cards`) of the links `ofOwners` takes. */
  linkCards: RowFilter;
}

/** `family` is the family's holder id (media/ownership.ts's familyOwnerId). */
export function familyRowFilters(familyId: string, family: string, members: Members, reader: string | undefined): FamilyRowFilters {
  const owners = reader === undefined ? sql`user_id in (${members})` : sql`user_id = ${reader}`;
  return {
    ofFamily: { where: sql`family_id = ${familyId}` },
    ofOwners: { where: owners },
    cards: {
      where:
        reader === undefined
          ? sql`user_id in (${members}) and origin = 'myo'`
          : sql`origin = 'myo' and (user_id = ${reader} or (user_id in (${members}) and deleted = 0))`,
    },
    holdings: {
      where: reader === undefined ? sql`owner_id in (${members}) or owner_id = ${family}` : sql`owner_id in (${reader}, ${family})`,
    },
    linkCards: { where: sql`link_id in (select link_id from links where ${owners})` },
  };
}

/** The media objects recorded among `hashes`. */
export async function recordedObjects(db: Db, hashes: readonly string[]): Promise<string[]> {
  const rows = await db.selectFrom('media_objects').select('sha256').where('sha256', 'in', hashes).execute();
  return rows.map((row) => row.sha256);
}

/** The accounts whose email key is among `emailKeys`. */
export async function accountsOfEmailKeys(db: Db, emailKeys: readonly string[]): Promise<{ user_id: string; email_key: string }[]> {
  return db.selectFrom('accounts').select(['user_id', 'email_key']).where('email_key', 'in', emailKeys).execute();
}

/** The memberships of the users among `userIds`. */
export async function membershipsOf(db: Db, userIds: readonly string[]): Promise<{ user_id: string; family_id: string }[]> {
  return db.selectFrom('family_memberships').select(['user_id', 'family_id']).where('user_id', 'in', userIds).execute();
}

/** The owner and origin of the cards among `cardIds`. */
export async function cardOwners(db: Db, cardIds: readonly string[]): Promise<Pick<CardRow, 'card_id' | 'user_id' | 'origin'>[]> {
  return db.selectFrom('cards').select(['card_id', 'user_id', 'origin']).where('card_id', 'in', cardIds).execute();
}
