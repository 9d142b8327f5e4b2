import type { Db } from '../../db/unit-of-work.js';
import { heldCardRows } from './queries.js';

/**
 * What a family library holds (DECISIONS.md, "Family library"): the one definition that the
 * library listing, the library add, groups (their items and `cards`) and card reads all use.
 *
 * - every catalogue card a member added (a library record), unless the card was deleted;
 * - every live MYO card of everyone who belongs to the family (`inFamilyLibrary: false`: it is
 *   there by being theirs, not by a record). A member who leaves takes their cards along, since
 *   membership is read at the time of the query.
 *
 * A record of a MYO card (one added when its owner's library still took them by record) counts
 * for nothing: a MYO card is held exactly while its owner belongs to the family.
 */
export interface HeldCard {
  cardId: string;
  /** When it entered the library: the record's time, or the MYO card's creation. */
  addedAt: string;
  inFamilyLibrary: boolean;
  /** Only with `includeDeleted`: a record whose card was deleted. */
  deleted: boolean;
  /** The card as JSON, in the form asked for. */
  json: string;
}

export interface HoldingsQuery {
  /**
   * Only these cards, in no particular order (callers look them up by id, and sorting would copy
   * every document through a temporary b-tree); every card the library holds, in the order they
   * entered it, when left out.
   */
  cardIds?: readonly string[];
  /** The full card (`doc`, with chapters) or its list form (`summary`). */
  form: 'doc' | 'summary';
  /** Also the records whose card was deleted (`showdeleted=true`). */
  includeDeleted?: boolean;
}

/** The cards the family's library holds (see HoldingsQuery for their order), in one query. */
export async function heldCards(db: Db, familyId: string, query: HoldingsQuery): Promise<HeldCard[]> {
  const ids = query.cardIds && [...new Set(query.cardIds)];
  if (ids?.length === 0) return [];
  const rows = await heldCardRows(db, familyId, { cardIds: ids, form: query.form, includeDeleted: query.includeDeleted ?? false });
  return rows.map((r) => ({
    cardId: r.card_id,
    addedAt: r.added_at,
    inFamilyLibrary: Number(r.in_family_library) === 1,
    deleted: r.deleted === 1,
    json: r.json,
  }));
}

/** Whether the family's library holds the card (a live one). */
export async function holds(db: Db, familyId: string, cardId: string): Promise<boolean> {
  return (await heldCards(db, familyId, { cardIds: [cardId], form: 'summary' })).length > 0;
}
