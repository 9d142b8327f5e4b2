import { EventEmitter } from 'node:events';
import type { StoreDialect } from '../../db/dialect.js';
import type { Trx } from '../../db/unit-of-work.js';
import { now } from '../../shared/clock.js';
import type { EventData, EventKind } from './catalogue.js';
import { insertEvent } from './repository.js';

/**
 * Publishing a live event (`GET /user/family/events`, issue 21). Any module calls `publish`
 * INSIDE the transaction of the write the event describes, as its LAST statements (after
 * `bumpCounters`): the event is a row of the log (table `live_events`) that commits with the
 * change or not at all, so the log is the truth; streams read it, and a notification only
 * wakes them.
 *
 *   await bumpCounters(trx, [...]);
 *   await publish(trx, store.dialect, { kind: 'group.changed', audience: { familyId }, ids: { groupId }, read, tag });
 *
 * Why last: on PostgreSQL it takes a transaction lock (released at commit) so that events get
 * their ids in the order they commit; a stream that has seen id n has then seen every id below n.
 * Taken after every other lock of the unit of work, it never closes a cycle of waits. The
 * notification that wakes the other instances' streams is sent by PostgreSQL at commit.
 */

export type { EventKind } from './catalogue.js';

/** Who may see an event: every member of a family, or one user alone (their wishlists, transcodes). */
export type Audience = { familyId: string } | { userId: string };

/**
 * An event to publish: who sees it, and its data as the catalogue (catalogue.ts) types its kind:
 * `ids`, the `read` the change affects and `tag`, the entity tag that read answers with now (its
 * ETag: a client holding that tag has nothing to fetch; with another, it fetches with
 * `If-None-Match`), where the kind has them, and the kind's own fields.
 */
export type LiveEvent<K extends EventKind = EventKind> = { [Kind in K]: { audience: Audience } & EventData<Kind> }[K];

/** The PostgreSQL channel that wakes every instance's streams (repository.ts notifies it). */
export { EVENTS_CHANNEL } from './repository.js';

/**
 * This process's publishers: fired after a publishing transaction had the chance to commit, it
 * wakes this process's streams at once (the log poll and LISTEN/NOTIFY reach the others).
 */
export const localPublications = new EventEmitter();
localPublications.setMaxListeners(0);

export async function publish(trx: Trx, dialect: StoreDialect, event: LiveEvent): Promise<void> {
  const { audience, kind, ids, ...fields } = event;
  // `kind`, `ids`, `read`, `tag` first, then the kind's own fields (the order the stream has
  // always had); a field left undefined is not written.
  const { read, tag, ...own } = fields as { read?: string; tag?: string };
  await insertEvent(
    trx,
    dialect,
    'familyId' in audience ? audience.familyId : null,
    'userId' in audience ? audience.userId : null,
    kind,
    now(),
    JSON.stringify({ kind, ids, read, tag, ...own }),
  );
  // The unit of work commits in the promise jobs that follow; a macrotask later it has.
  setImmediate(() => localPublications.emit('published'));
}

/** `publish` for several events of one transaction (in order). */
export async function publishAll(trx: Trx, dialect: StoreDialect, events: readonly LiveEvent[]): Promise<void> {
  for (const event of events) await publish(trx, dialect, event);
}
