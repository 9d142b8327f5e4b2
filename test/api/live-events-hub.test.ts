import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import type { Principal } from '../../src/auth/principal.js';
import { loadConfig } from '../../src/config.js';
import type { Store } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openStore } from '../../src/db/store.js';
import { inUnitOfWork } from '../../src/db/unit-of-work.js';
import { createEventHub, type EventHub, type EventSink } from '../../src/modules/events/hub.js';
import { publishAll, type LiveEvent } from '../../src/modules/events/publish.js';
import { pause } from '../support/event-stream.js';

/**
 * The hub's writes to its streams (src/modules/events/fan-out.ts, driven by hub.ts), seen at the sink: each write to
 * a response is a system call, so what one read of the log brings goes out in one write per
 * stream. On SQLite in a directory of its own: the hub's fan-out does not depend on the store.
 */

let store: Store | undefined;
let hub: EventHub | undefined;
let dir: string | undefined;
afterEach(async () => {
  await hub?.close();
  await store?.db.destroy();
  if (dir) await rm(dir, { recursive: true, force: true });
  hub = store = dir = undefined;
});

function recordingSink(): EventSink & { writes: string[] } {
  const writes: string[] = [];
  return {
    writes,
    write: (chunk) => void writes.push(chunk),
    buffered: () => 0,
    end: (last) => void writes.push(last),
    destroy: () => {},
    onClose: () => {},
    gone: () => false,
  };
}

async function openHub(): Promise<{ store: Store; hub: EventHub }> {
  dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-hub-'));
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', EVENTS_HEARTBEAT_SECONDS: '60' });
  store = openStore(config.database);
  await migrateToLatest(store);
  hub = createEventHub(store, config.events, { log: { warn: () => {} }, principalStands: async () => true });
  return { store, hub };
}

/** A member's principal, as the auth plugin makes it. */
const member = (userId: string): Principal => ({ userId, scopes: new Set(['family:library:view']) });

const event = (groupId: string, audience: LiveEvent['audience']): LiveEvent => ({
  kind: 'group.changed',
  audience,
  ids: { groupId },
  read: `/card/family/library/groups/${groupId}`,
  tag: `"${groupId}"`,
});
const groupsIn = (chunk: string | undefined): string[] => [...(chunk ?? '').matchAll(/"groupId":"(\w+)"/g)].map((m) => m[1] as string);

it('writes the events of one read of the log once to each stream, in order, each stream its own', async () => {
  const { store, hub } = await openHub();

  const sinks = { a: recordingSink(), b: recordingSink(), other: recordingSink() };
  await hub.start(hub.reserve({ reader: 'a' }), { reader: { familyId: 'f1', userId: 'a' }, principal: member('a'), lastEventId: undefined, expiresAt: undefined }, sinks.a);
  await hub.start(hub.reserve({ reader: 'b' }), { reader: { familyId: 'f1', userId: 'b' }, principal: member('b'), lastEventId: undefined, expiresAt: undefined }, sinks.b);
  await hub.start(hub.reserve({ reader: 'c' }), { reader: { familyId: 'f2', userId: 'c' }, principal: member('c'), lastEventId: undefined, expiresAt: undefined }, sinks.other);
  const connected = { a: sinks.a.writes.length, b: sinks.b.writes.length, other: sinks.other.writes.length };

  await inUnitOfWork(store, [], (trx) =>
    publishAll(trx, store.dialect, [
      event('g1', { familyId: 'f1' }),
      event('g2', { familyId: 'f1' }),
      event('mine', { userId: 'a' }),
      event('g3', { familyId: 'f1' }),
      event('elsewhere', { familyId: 'f2' }),
    ]),
  );
  for (let i = 0; i < 100 && sinks.a.writes.length === connected.a; i++) await pause(10);

  // One write each: a has every event of the family and its own, b not a's own, the other family its own.
  expect(sinks.a.writes.slice(connected.a).map(groupsIn)).toEqual([['g1', 'g2', 'mine', 'g3']]);
  expect(sinks.b.writes.slice(connected.b).map(groupsIn)).toEqual([['g1', 'g2', 'g3']]);
  expect(sinks.other.writes.slice(connected.other).map(groupsIn)).toEqual([['elsewhere']]);
  // Every frame whole: an id, a kind and data, with the blank line that ends it.
  expect(sinks.a.writes.at(-1)).toMatch(/^(id: \d+\nevent: group\.changed\ndata: \{[^\n]*\}\n\n){4}$/);
});

it('lets writes that come while it writes to slow streams gather, and sends them together next', async () => {
  const { store, hub } = await openHub();
  // Each write to this stream takes 5 ms of the thread: after one, the hub waits about 95 ms
  // (MAX_FANOUT_SHARE) before it reads the log again.
  const sink = recordingSink();
  const slowWrite = sink.write;
  sink.write = (chunk) => {
    const until = performance.now() + 5;
    while (performance.now() < until);
    slowWrite(chunk);
  };
  await hub.start(hub.reserve({ reader: 'a' }), { reader: { familyId: 'f1', userId: 'a' }, principal: member('a'), lastEventId: undefined, expiresAt: undefined }, sink);
  const connected = sink.writes.length;
  const publishOne = (groupId: string) => inUnitOfWork(store, [], (trx) => publishAll(trx, store.dialect, [event(groupId, { familyId: 'f1' })]));

  await publishOne('g1');
  for (let i = 0; i < 100 && sink.writes.length === connected; i++) await pause(5);
  // Three writes, each its own transaction and wake, while the hub waits.
  for (const id of ['g2', 'g3', 'g4']) {
    await publishOne(id);
    // Each wake has the chance to read the log before the next write.
    await pause(2);
  }
  for (let i = 0; i < 100 && sink.writes.length < connected + 2; i++) await pause(10);
  expect(sink.writes.slice(connected).map(groupsIn)).toEqual([['g1'], ['g2', 'g3', 'g4']]);
});
