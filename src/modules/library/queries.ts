import { sql } from 'kysely';
import { preparedPerShape } from '../../db/prepared.js';
import { memberIdsOf } from '../families/queries.js';
import type { Db } from '../../db/unit-of-work.js';

/** The SQL of what a family library holds (holdings.ts says what that is, and is its one reader). */

/** One held card as the query returns it. */
export interface HeldCardRow {
  card_id: string;
  added_at: string;
  /** 1 for a library record, 0 for a member's MYO card (as a number or its text, by database). */
  in_family_library: number;
  deleted: number;
  json: string;
}

/** What the query reads: holdings.ts's HoldingsQuery, its card ids made distinct and not empty. */
export interface HeldCardsWanted {
  /** Distinct and not empty; every card the library holds, in the order they entered it, when left out. */
  cardIds: readonly string[] | undefined;
  form: 'doc' | 'summary';
  includeDeleted: boolean;
}

/**
 * How many card ids the compiled query of a shape takes: the next power of two, so that a few
 * shapes serve every list (the rest of a list's slots repeat its first id, which `in` ignores).
 * A longer list is built for itself.
 */
const MAX_PREPARED_IDS = 256;
const slotsFor = (count: number): number => 2 ** Math.ceil(Math.log2(count));

interface HoldingsShape {
  form: HeldCardsWanted['form'];
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

/**
 * The query of each shape, compiled once (db/prepared.ts), on a list: the family's id, then the
 * card ids (as many as the shape's slots).
 */
const preparedHoldings = preparedPerShape(
  (shape: HoldingsShape) => `${shape.form} ${shape.includeDeleted} ${shape.slots ?? 'all'}`,
  (db, shape, list: readonly string[]) => {
    const slots = shape.slots;
    return holdingsQuery(db, shape, list[0]!, slots === undefined ? undefined : Array.from({ length: slots }, (_, i) => list[i + 1]!));
  },
);

/** The family library's cards that `wanted` asks for, in one query. */
export async function heldCardRows(db: Db, familyId: string, wanted: HeldCardsWanted): Promise<HeldCardRow[]> {
  const { cardIds: ids, form, includeDeleted } = wanted;
  const slots = ids && slotsFor(ids.length);
  return ids && ids.length > MAX_PREPARED_IDS
    ? await holdingsQuery(db, { form, includeDeleted, slots: ids.length }, familyId, ids).execute()
    : await preparedHoldings(db, { form, includeDeleted, slots }, [familyId, ...(ids && slots ? padded(ids, slots) : [])]);
}

/** `ids` filling `slots`, the rest its first id again. */
const padded = (ids: readonly string[], slots: number): string[] =>
  Array.from({ length: slots }, (_, i) => ids[i] ?? (ids[0] as string));
