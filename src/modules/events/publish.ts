import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import type { StoreDialect } from '../../db/dialect.js';
import type { Trx } from '../../db/unit-of-work.js';
import { now } from '../../shared/clock.js';

/**
 * Publishing a live event (`GET /user/family/events`, issue 21). Any module calls `publish`
 * INSIDE the transaction of the write the event describes, after `bumpCounters` (an event
 * names the tag the counters make): the event is a row of the log (table `live_events`) that
 * commits with the change or not at all, so the log is the truth; streams read it, and a
 * notification only wakes them.
 *
 *   await bumpCounters(trx, [...]);
 *   await publish(trx, store.dialect, { kind: 'group.changed', audience: { familyId }, ids: { groupId }, read, tag });
 *
 * Order without a lock. Events get their ids (a sequence) when they are written, not when they
 * commit, so on PostgreSQL, where writers run at once, an event with a smaller id may commit
 * after a reader has read a larger one; a reader that kept only "the last id read" would miss it.
 * A lock taken by every publisher would order the commits, but it would also serialise every
 * publishing write of the whole fleet. Instead (the transactional outbox's technique), each event
 * keeps the id of its transaction (`pg_current_xact_id()`, column `tx_id`), and readers follow
 * the log in the order (tx_id, id) up to the horizon of their snapshot: only events whose
 * transaction is older than every transaction still running
 * (`pg_snapshot_xmin(pg_current_snapshot())`). Every transaction that may still commit is at or
 * past that horizon, so nothing can appear later before a position a reader has passed
 * (repository.ts). The cost: an event waits for the transactions that started before it
 * (any writer's, on the same database) to end; a commit's NOTIFY then wakes the readers, and a
 * reader that saw events held back by the horizon reads again shortly (hub.ts). Streams send
 * events in the order of their transactions' ids (given at a transaction's first write), which
 * may differ from the order of the commits: an event's `tag` may then be older than that of one
 * sent before it; a client refetching with `If-None-Match` gets a 304, nothing is lost.
 *
 * SQLite has one writer at a time: ids are given in commit order, and `tx_id` is 0.
 */

/** What happened. `player.*` kinds are the family's players' (modules of the devices). */
export type EventKind =
  | 'library.added'
  | 'library.removed'
  | 'group.created'
  | 'group.changed'
  | 'group.deleted'
  | 'card.created'
  | 'card.changed'
  | 'card.deleted'
  | 'wishlist.created'
  | 'wishlist.changed'
  | 'wishlist.deleted'
  | 'family.changed'
  | 'transcode.finished'
  | 'transcode.failed'
  | `player.${string}`;

/** Who may see an event: every member of a family, or one user alone (their wishlists, transcodes). */
export type Audience = { familyId: string } | { userId: string };

export interface LiveEvent {
  kind: EventKind;
  audience: Audience;
  /** The ids of what changed, e.g. `{ groupId }`, `{ cardId }`, `{ deviceId }`. */
  ids: Record<string, string>;
  /**
   * The read the change affects (its path, e.g. `/card/family/library`), and `tag`, the entity
   * tag that read answers with now (its ETag): a client holding that tag has nothing to fetch;
   * with another, it fetches (with `If-None-Match`). No tag where the read has none (a delete).
   */
  read?: string;
  tag?: string;
  /** Anything else the kind carries (a player's status), as JSON-able values. */
  details?: Record<string, unknown>;
}

/** The PostgreSQL channel that wakes every instance's streams (delivered at commit). */
export const EVENTS_CHANNEL = 'cardshelf_events';

/**
 * This process's publishers: fired after a publishing transaction had the chance to commit, it
 * wakes this process's streams at once (the log poll and LISTEN/NOTIFY reach the others).
 */
export const localPublications = new EventEmitter();
localPublications.setMaxListeners(0);

export async function publish(trx: Trx, dialect: StoreDialect, event: LiveEvent): Promise<void> {
  const { kind, audience, ids, read, tag, details } = event;
  await trx
    .insertInto('live_events')
    .values({
      family_id: 'familyId' in audience ? audience.familyId : null,
      user_id: 'userId' in audience ? audience.userId : null,
      kind,
      // Text to bigint: xid8 has no cast to bigint of its own (the epoch and xid, 64 bits).
      ...(dialect.name === 'postgres' ? { tx_id: sql<string>`pg_current_xact_id()::text::bigint` } : {}),
      at: now(),
      data: JSON.stringify({ kind, ids, ...(read === undefined ? {} : { read }), ...(tag === undefined ? {} : { tag }), ...(details ?? {}) }),
    })
    .execute();
  // Sent by PostgreSQL when (and only if) the transaction commits.
  if (dialect.name === 'postgres') await sql`select pg_notify(${EVENTS_CHANNEL}, '')`.execute(trx);
  // The unit of work commits in the promise jobs that follow; a macrotask later it has.
  setImmediate(() => localPublications.emit('published'));
}

/** `publish` for several events of one transaction (in order). */
export async function publishAll(trx: Trx, dialect: StoreDialect, events: readonly LiveEvent[]): Promise<void> {
  for (const event of events) await publish(trx, dialect, event);
}
