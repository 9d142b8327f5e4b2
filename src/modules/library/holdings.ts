import { sql } from 'kysely';
import { preparedPerShape } from '../../db/prepared.js';
import { memberIdsOf } from '../families/queries.js';
import type { Db } from '../../db/unit-of-work.js';

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

/**
 * How many card ids the compiled query of a shape takes: the next power of two, so that a few
 * shapes serve every list (the rest of a list's slots repeat its first id, which `in` ignores).
 * A longer list is built for itself.
 */
const MAX_PREPARED_IDS = 256;
const slotsFor = (count: number): number => 2 ** Math.ceil(Math.log2(count));

interface HoldingsShape {
  form: HoldingsQuery['form'];
  includeDeleted: boolean;
  /** Slots for card ids, or undefined for every card the library holds, in order. */
  slots: number | undefined;
}

function holdingsQuery(db: Db, shape: HoldingsShape, familyId: string, ids: readonly string[] | undefined) {
  const json = shape.form === 'doc' ? ('c.doc as json' as const) : ('c.summary as json' as const);

  let recorded = db
    .selectFrom('library_records as r')
    .innerJoin('cards as c', 'c.card_id', 'r.card_id')
    .select(['c.card_id', 'r.created_at as added_at', sql<number>`1`.as('in_family_library'), 'c.deleted', json])
    .where('r.family_id', '=', familyId)
    .where('c.origin', '=', 'catalogue');
  if (!shape.includeDeleted) recorded = recorded.where('c.deleted', '=', 0);
  if (ids) recorded = recorded.where('r.card_id', 'in', ids);

  // Joined to the members, not `user_id in (members)`: SQLite plans that as a scan of every
  // card (with a Bloom filter), where the join reads each member's cards by index
  // (cards_owner_list): 1.3-1.7 ms against 0.55-0.85 ms for ~100 cards on the bench's database.
  let members = db
    .selectFrom(memberIdsOf(db, familyId).as('m'))
    .innerJoin('cards as c', 'c.user_id', 'm.user_id')
    .select(['c.card_id', 'c.created_at as added_at', sql<number>`0`.as('in_family_library'), 'c.deleted', json])
    .where('c.origin', '=', 'myo')
    .where('c.deleted', '=', 0);
  if (ids) members = members.where('c.card_id', 'in', ids);

  const held = recorded.unionAll(members);
  return ids ? held : held.orderBy('added_at').orderBy('card_id');
}

/** The query of each shape, compiled once (db/prepared.ts): the family's id, then the card ids. */
const preparedHoldings = preparedPerShape(
  (shape: HoldingsShape) => `${shape.form} ${shape.includeDeleted} ${shape.slots ?? 'all'}`,
  (db, shape, familyId: string, ...ids: string[]) => holdingsQuery(db, shape, familyId, shape.slots === undefined ? undefined : ids),
  (shape) => 1 + (shape.slots ?? 0),
);

/** The cards the family's library holds (see HoldingsQuery for their order), in one query. */
export async function heldCards(db: Db, familyId: string, query: HoldingsQuery): Promise<HeldCard[]> {
  const ids = query.cardIds && [...new Set(query.cardIds)];
  if (ids?.length === 0) return [];
  const includeDeleted = query.includeDeleted ?? false;
  const slots = ids && slotsFor(ids.length);
  const rows =
    ids && ids.length > MAX_PREPARED_IDS
      ? await holdingsQuery(db, { form: query.form, includeDeleted, slots: ids.length }, familyId, ids).execute()
      : await preparedHoldings(db, { form: query.form, includeDeleted, slots }, familyId, ...(ids && slots ? padded(ids, slots) : []));
  return rows.map((r) => ({
    cardId: r.card_id,
    addedAt: r.added_at,
    inFamilyLibrary: Number(r.in_family_library) === 1,
    deleted: r.deleted === 1,
    json: r.json,
  }));
}

/** `ids` filling `slots`, the rest its first id again. */
const padded = (ids: readonly string[], slots: number): string[] =>
  Array.from({ length: slots }, (_, i) => ids[i] ?? (ids[0] as string));

/** Whether the family's library holds the card (a live one). */
export async function holds(db: Db, familyId: string, cardId: string): Promise<boolean> {
  return (await heldCards(db, familyId, { cardIds: [cardId], form: 'summary' })).length > 0;
}
