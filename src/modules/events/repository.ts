import { sql } from 'kysely';
import type { StoreDialect } from '../../db/dialect.js';
import { preparedPerShape } from '../../db/prepared.js';
import type { Db } from '../../db/unit-of-work.js';
import { familyIdOf, familyIdOfUser } from '../families/queries.js';
import { FAMILY_CHANGED } from './revocations.js';

/** The log of live events (migration 008): its writing (publish.ts), its reads, and its pruning. */

/** The PostgreSQL channel that wakes every instance's streams (delivered at commit). */
export const EVENTS_CHANNEL = 'cardshelf_events';

/**
 * The ordering domain of an event (publish.ts says why): a family, for the family's events and
 * its members' own; a user without a family, for that user's own. Its lock key, in JS here and
 * in SQL in `insertEvent` (one rule, two spellings: both must name the same key).
 */
const FAMILY_DOMAIN = 'events:family:';
const USER_DOMAIN = 'events:user:';

/** The domains of the audiences given (read in `trx`: a user's family), each once, in key order. */
export async function domainKeysOf(trx: Db, audiences: readonly { familyId: string | null; userId: string | null }[]): Promise<string[]> {
  const keys = new Set<string>();
  for (const { familyId, userId } of audiences) {
    const family = familyId ?? (userId === null ? undefined : await familyIdOfUser(trx, userId));
    keys.add(family !== undefined ? `${FAMILY_DOMAIN}${family}` : `${USER_DOMAIN}${String(userId)}`);
  }
  return [...keys].sort();
}

type EventValues = { family_id: string | null; user_id: string | null; kind: string; at: string; data: string };

/**
 * The log's insert, compiled once per kind of database (db/prepared.ts): every publishing write
 * runs it. On PostgreSQL the one statement also takes its domain's ordering lock before the row
 * gets its id (the row is formed from a subquery that takes it; a user's domain is their family,
 * read in the same subquery) and queues the notification: one round trip instead of three.
 */
export const insertEvent = preparedPerShape<StoreDialect, EventValues, unknown>(
  (dialect) => dialect.name,
  (db, dialect, { family_id, user_id, kind, at, data }) => {
    const text = (value: string | null) => sql<string>`cast(${value} as text)`;
    const family = sql<string>`coalesce(${text(family_id)}, (${familyIdOf(db, text(user_id))}))`;
    const domain = sql<string>`coalesce(${FAMILY_DOMAIN} || ${family}, ${USER_DOMAIN} || ${text(user_id)})`;
    // Where the database takes neither a lock nor a notification in a statement (SQLite, whose
    // writes are one at a time and whose wakers poll), the row alone.
    const lock = dialect.lockKeyExpression(domain);
    const notify = dialect.notifyOnCommit(EVENTS_CHANNEL);
    if (!lock || !notify) return db.insertInto('live_events').values({ family_id, user_id, kind, at, data });
    const ordered = db.selectNoFrom([lock.as('ordered'), notify.as('woken')]).as('ordered');
    return db
      .insertInto('live_events')
      .columns(['family_id', 'user_id', 'kind', 'at', 'data'])
      .expression(
        db
          .selectFrom(ordered)
          .select([text(family_id).as('family_id'), text(user_id).as('user_id'), text(kind).as('kind'), text(at).as('at'), text(data).as('data')]),
      );
  },
);

/** One event as a stream sends it: its id, and its JSON (kind, ids, read, tag, ...). */
export interface LoggedEvent {
  id: number;
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

/** The highest id pruned away: the change counter `events:pruned` (0 when none was). */
export const PRUNED_SCOPE = 'events:pruned';

const columns = ['id', 'family_id', 'user_id', 'kind', 'data'] as const;
const toEvent = (row: { id: number | string; family_id: string | null; user_id: string | null; kind: string; data: string }): LoggedEvent => ({
  id: Number(row.id),
  familyId: row.family_id,
  userId: row.user_id,
  kind: row.kind,
  data: row.data,
});

/** Ids from `from` to `to`, both included. */
export interface IdRange {
  from: number;
  to: number;
}

/**
 * The events above `top` and those in `ranges` (ids the follower has not seen yet below `top`),
 * oldest first, at most `limit` (what wakes an instance's streams: log-follower.ts).
 */
export async function eventsAboveOrIn(db: Db, top: number, ranges: readonly IdRange[], limit: number): Promise<LoggedEvent[]> {
  const rows = await db
    .selectFrom('live_events')
    .select(columns)
    .where((eb) => eb.or([eb('id', '>', top), ...ranges.map(({ from, to }) => eb.between('id', from, to))]))
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toEvent);
}

/** The ids of the events after `afterId`, oldest first, at most `limit`. */
export async function eventIdsAfter(db: Db, afterId: number, limit: number): Promise<number[]> {
  const rows = await db.selectFrom('live_events').select('id').where('id', '>', afterId).orderBy('id').limit(limit).execute();
  return rows.map((row) => Number(row.id));
}

/** The newest id of an event written at or before `at` (ISO time), 0 if none. */
export async function lastIdWrittenBy(db: Db, at: string): Promise<number> {
  // The newest first, by id: rows newer than `at` are few, so the scan stops soon.
  const row = await db.selectFrom('live_events').select('id').where('at', '<=', at).orderBy('id', 'desc').limit(1).executeTakeFirst();
  return Number(row?.id ?? 0);
}

/**
 * The events `reader` may see after `afterId`, oldest first, at most `limit` (a replay): its
 * own, and its family's after `familyAfter` (the reader's joining, see `logBounds`).
 */
export async function eventsOfReaderAfter(db: Db, reader: Reader, afterId: number, limit: number, familyAfter: number): Promise<LoggedEvent[]> {
  const { familyId } = reader;
  const rows = await db
    .selectFrom('live_events')
    .select(columns)
    .where('id', '>', afterId)
    .where((eb) =>
      familyId === undefined
        ? eb('user_id', '=', reader.userId)
        : eb.or([eb.and([eb('family_id', '=', familyId), eb('id', '>', familyAfter)]), eb('user_id', '=', reader.userId)]),
    )
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toEvent);
}

/**
 * The newest id of the log; the newest id `reader` may see (its family's or its own; 0 when
 * none); the highest id pruned away; and `joinedAt`: the id of the event that told `memberId`
 * they moved into their family (0 when the log no longer has it), in one read.
 *
 * Ids follow commits within a family (publish.ts): the reader's newest is where a new stream
 * starts, so that an event of its family still being written gets an id above it. The log's
 * newest may be above events of other families, or of the reader's, not yet committed.
 *
 * Every move into a family (joining with an invitation, an operator's `PUT /admin/families`)
 * publishes that event in the transaction of the move, which holds the ordering lock of the
 * family moved into: the family's events above it came after the joining, those below it
 * before. When it was pruned, every event the log still has came after. (A stub family, made
 * with its user, has no earlier events.)
 */
export async function logBounds(
  db: Db,
  memberId: string,
  reader: Reader,
): Promise<{ lastId: number; readerLastId: number; prunedUpTo: number; joinedAt: number }> {
  const { rows } = await sql<{
    last_id: number | string | null;
    family_last: number | string | null;
    own_last: number | string | null;
    pruned: number | string | null;
    joined: number | string | null;
  }>`
    select (select max(id) from live_events) as last_id,
           (select max(id) from live_events where family_id = ${reader.familyId ?? null}) as family_last,
           (select max(id) from live_events where user_id = ${reader.userId}) as own_last,
           (select version from change_counters where scope = ${PRUNED_SCOPE}) as pruned,
           (select max(id) from live_events where user_id = ${memberId} and kind = ${FAMILY_CHANGED}) as joined`.execute(db);
  const row = rows[0];
  const prunedUpTo = Number(row?.pruned ?? 0);
  return {
    // An emptied log continues from the last id it pruned.
    lastId: Math.max(Number(row?.last_id ?? 0), prunedUpTo),
    readerLastId: Math.max(Number(row?.family_last ?? 0), Number(row?.own_last ?? 0)),
    prunedUpTo,
    joinedAt: Number(row?.joined ?? 0),
  };
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
