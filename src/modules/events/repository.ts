import { sql } from 'kysely';
import type { Db } from '../../db/unit-of-work.js';

/** The log of live events (migration 008): its reads, and its pruning. */

/**
 * A place in the log. Streams follow the log in the order (tx, id): `tx` the writing
 * transaction's id on PostgreSQL, 0 on SQLite (publish.ts says why).
 */
export interface Position {
  tx: number;
  id: number;
}

/** Whether `a` comes after `b` in the log's order. */
export const isAfter = (a: Position, b: Position): boolean => a.tx > b.tx || (a.tx === b.tx && a.id > b.id);

/** One event as a stream sends it: its id, and its JSON (kind, ids, read, tag, ...). */
export interface LoggedEvent extends Position {
  familyId: string | null;
  userId: string | null;
  kind: string;
  data: string;
}

/** Who reads: a family's events (if the user has a family) and the user's own. */
export interface Reader {
  familyId: string | undefined;
  userId: string;
}

/**
 * What a read of the log found: the events up to the horizon, in order; whether it stopped at
 * the limit (`more`); and whether committed events wait beyond the horizon (`held`: a
 * transaction that started before them still runs), to be read again shortly.
 */
export interface LogRead {
  events: LoggedEvent[];
  more: boolean;
  held: boolean;
}

/** The highest id pruned away: the change counter `events:pruned` (0 when none was). */
export const PRUNED_SCOPE = 'events:pruned';

/**
 * The horizon of the reading statement's snapshot: on PostgreSQL the oldest transaction still
 * running (every transaction that may yet commit is at or past it); none on SQLite, whose
 * single writer commits in id order.
 */
const horizon = (ordered: boolean) => (ordered ? sql`pg_snapshot_xmin(pg_current_snapshot())::text::bigint` : sql`null`);

type EventRow = { id: number | string; tx_id: number | string; family_id: string | null; user_id: string | null; kind: string; data: string; held: unknown };
const toEvent = (row: EventRow): LoggedEvent => ({
  id: Number(row.id),
  tx: Number(row.tx_id),
  familyId: row.family_id,
  userId: row.user_id,
  kind: row.kind,
  data: row.data,
});

/**
 * The events after `from` (of `reader` only, if given), in the log's order, at most `limit`, up
 * to the horizon. `ordered`: PostgreSQL's horizon applies (see `horizon`).
 */
export async function readLog(db: Db, ordered: boolean, from: Position, limit: number, reader?: Reader): Promise<LogRead> {
  const whose =
    reader === undefined
      ? sql``
      : reader.familyId === undefined
        ? sql`and user_id = ${reader.userId}`
        : sql`and (family_id = ${reader.familyId} or user_id = ${reader.userId})`;
  const { rows } = await sql<EventRow>`
    select id, tx_id, family_id, user_id, kind, data, case when tx_id >= h.horizon then 1 else 0 end as held
    from live_events, (select ${horizon(ordered)} as horizon) h
    where (tx_id, id) > (${from.tx}, ${from.id}) ${whose}
    order by tx_id, id
    limit ${limit}`.execute(db);
  // In this order every row past the first one held back is held back too.
  const firstHeld = rows.findIndex((r) => Number(r.held) === 1);
  const events = (firstHeld === -1 ? rows : rows.slice(0, firstHeld)).map(toEvent);
  return { events, more: firstHeld === -1 && rows.length === limit, held: firstHeld !== -1 };
}

/**
 * Where the log stands, in one read: `head`, its newest event up to the horizon (a `reset`
 * names its id; an emptied log continues from the last id it pruned); `start`, where a stream
 * starting now begins (every event after it is yet to be sent: on PostgreSQL the horizon itself,
 * so that an event still to commit is not passed over); `committed`, the ids of the events past
 * `start` that committed already (held back by the horizon: the stream skips them, as it skips
 * everything that happened before it); and the highest id pruned away.
 */
export async function logBounds(
  db: Db,
  ordered: boolean,
): Promise<{ head: Position; start: Position; committed: number[]; prunedUpTo: number }> {
  const { rows } = await sql<{ horizon: number | string | null; tx_id: number | string | null; id: number | string | null; pruned: number | string | null }>`
    select h.horizon, e.tx_id, e.id, (select version from change_counters where scope = ${PRUNED_SCOPE}) as pruned
    from (select ${horizon(ordered)} as horizon) h
    left join (
      select tx_id, id from live_events, (select ${horizon(ordered)} as horizon) h2
      where h2.horizon is null or tx_id < h2.horizon
      order by tx_id desc, id desc limit 1
    ) e on true`.execute(db);
  const row = rows[0];
  const prunedUpTo = Number(row?.pruned ?? 0);
  const head = row?.id === null || row?.id === undefined ? { tx: 0, id: prunedUpTo } : { tx: Number(row.tx_id), id: Number(row.id) };
  if (row?.horizon === null || row?.horizon === undefined) return { head, start: head, committed: [], prunedUpTo };
  const start = { tx: Number(row.horizon), id: 0 };
  // Read after the horizon: whatever committed meanwhile is skipped too, which is right.
  const held = await db.selectFrom('live_events').select('id').where('tx_id', '>=', start.tx).execute();
  return { head, start, committed: held.map((r) => Number(r.id)), prunedUpTo };
}

/** The position of the event whose id is `id`, if the log still has it. */
export async function positionOf(db: Db, id: number): Promise<Position | undefined> {
  const row = await db.selectFrom('live_events').select(['id', 'tx_id']).where('id', '=', id).executeTakeFirst();
  return row ? { tx: Number(row.tx_id), id: Number(row.id) } : undefined;
}

/**
 * Deletes the events written before `before` (ISO time) and records the highest id deleted, in
 * the caller's transaction; the number deleted.
 */
export async function pruneBefore(db: Db, before: string): Promise<number> {
  const found = await db.selectFrom('live_events').select((eb) => eb.fn.max('id').as('top')).where('at', '<', before).executeTakeFirst();
  if (found?.top === null || found?.top === undefined) return 0;
  const top = Number(found.top);
  const deleted = await db.deleteFrom('live_events').where('id', '<=', top).executeTakeFirst();
  // Instances prune at once: the mark only rises.
  await db
    .insertInto('change_counters')
    .values({ scope: PRUNED_SCOPE, version: top })
    .onConflict((oc) =>
      oc.column('scope').doUpdateSet({
        version: sql`case when change_counters.version < ${top} then ${top} else change_counters.version end`,
      }),
    )
    .execute();
  return Number(deleted.numDeletedRows);
}
