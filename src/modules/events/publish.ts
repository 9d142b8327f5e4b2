import type { StoreDialect } from '../../db/dialect.js';
import { holdLocks, userLock, type Trx } from '../../db/unit-of-work.js';
import { now } from '../../shared/clock.js';
import type { EventData, EventKind } from './catalogue.js';
import { domainKeysOf, insertEvent } from './repository.js';

/**
 * Publishing a live event (`GET /user/family/events`, issue 21). Any module calls `publish`
 * INSIDE the transaction of the write the event describes, as its LAST statements (after
 * `bumpCounters`): the event is a row of the log (table `live_events`) that commits with the
 * change or not at all, so the log is the truth; streams read it, and the commit only wakes
 * them (the dialect's `wakeOnCommit`).
 *
 *   await bumpCounters(trx, [...]);
 *   await publish(trx, store.dialect, { kind: 'group.changed', audience: { familyId }, ids: { groupId }, read, tag });
 *
 * Why last: on PostgreSQL it takes a transaction lock (released at commit) on the event's
 * ordering domain, so that the domain's events get their ids in the order they commit. A domain is
 * what one stream reads: a family (its events, and its members' own: their wishlists, uploads,
 * links, account), or a user without a family. A stream that has seen id n of its domain has
 * then seen every id of it below n, and `Last-Event-ID` resumes exactly; writes of different
 * families never wait for each other. (Other families' ids do not commit in order: the hub's
 * reading of the log waits for the holes, log-follower.ts.) Domain locks are taken after every
 * other lock of the unit of work, several in the order of their keys, so they never close a
 * cycle of waits. A transaction that publishes to several audiences publishes them together
 * (`publishAll`), which takes their domains' locks in that order first. The insert also asks
 * the database to wake every instance's streams at commit (`notifyOnCommit`).
 *
 * A user's own event belongs to the domain of the family they are in when it commits: it is
 * published under the user's lock (taken here unless the unit of work holds it), which every
 * move between families holds too (families/service.ts), so the family read does not change
 * before the commit.
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

/** The channel that wakes every instance's streams (repository.ts notifies it at commit). */
export { EVENTS_CHANNEL } from './repository.js';

export async function publish(trx: Trx, dialect: StoreDialect, event: LiveEvent): Promise<void> {
  await publishAll(trx, dialect, [event]);
}

/** `publish` for several events of one transaction (in order): publishes them all at once. */
export async function publishAll(trx: Trx, dialect: StoreDialect, events: readonly LiveEvent[]): Promise<void> {
  if (events.length === 0) return;
  const audiences = events.map(({ audience }) => ({
    familyId: 'familyId' in audience ? audience.familyId : null,
    userId: 'userId' in audience ? audience.userId : null,
  }));
  // The users whose own events these are stay in their families until the commit.
  await holdLocks(trx, dialect, audiences.flatMap(({ userId }) => (userId === null ? [] : [userLock(userId)])));
  // Several domains: their locks in one order first (each insert then takes its own again, for
  // nothing). One domain, the common case: the insert takes it.
  if (new Set(audiences.map((a) => `${a.familyId ?? ''}\0${a.userId ?? ''}`)).size > 1) {
    for (const key of await domainKeysOf(trx, audiences)) await dialect.lockKey(trx, key);
  }
  const at = now();
  for (const [i, event] of events.entries()) {
    const { familyId, userId } = audiences[i] as (typeof audiences)[number];
    const { audience: _audience, kind, ids, ...fields } = event;
    // `kind`, `ids`, `read`, `tag` first, then the kind's own fields (the order the stream has
    // always had); a field left undefined is not written.
    const { read, tag, ...own } = fields as { read?: string; tag?: string };
    // Answered with the commit (one round trip for both on PostgreSQL): nothing waits for its rows.
    await insertEvent.withCommit(trx, dialect, { family_id: familyId, user_id: userId, kind, at, data: JSON.stringify({ kind, ids, read, tag, ...own }) });
  }
}
