import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../src/db/dialect.js';
import { openStore } from '../src/db/store.js';
import { publish } from '../src/modules/events/publish.js';
import { startTestApp, type TestApp } from './helpers.js';
import { familyOf, newUser, VIEW } from './fixtures.js';
import { openEventStream, pause, type EventStreamClient } from './support/event-stream.js';
import { testDialect } from './support/test-database.js';

/**
 * Live events in commit order without a lock (publish.ts): two publishing transactions at once
 * on PostgreSQL, the one with the larger event id committing first. A stream that follows, and
 * one that resumes from the last event another saw, get both events. (SQLite has one writer at
 * a time: there, transactions cannot overlap.)
 */
describe.runIf(testDialect() === 'postgres')('live events of concurrent transactions on postgres', () => {
  let t: TestApp;
  let store: Store;
  let base: string;
  const open: EventStreamClient[] = [];

  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: 'warn' });
    store = openStore(t.config.database);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await store?.db.destroy();
    await t?.close();
  });

  const stream = async (userId: string, lastEventId?: string): Promise<EventStreamClient> => {
    const s = await openEventStream(base, await t.token(userId, VIEW), lastEventId === undefined ? {} : { lastEventId });
    expect(s.status).toBe(200);
    open.push(s);
    return s;
  };

  it('delivers an event that commits after one with a larger id, to a stream that follows and to one that resumes', async () => {
    const [a, b] = [newUser('a'), newUser('b')];
    const familyId = await familyOf(t, [a, b]);
    const event = (name: string) => ({ kind: 'group.changed' as const, audience: { familyId }, ids: { groupId: name } });
    const following = await stream(b);
    const first = await stream(a);
    await store.db.transaction().execute((trx) => publish(trx, store.dialect, event('before')));
    await first.waitFor((e) => e.data.ids.groupId === 'before');

    // A publishes (the smaller id) and stays open; B publishes (a larger id) and commits first.
    let releaseA!: () => void;
    const aMayCommit = new Promise<void>((resolve) => (releaseA = resolve));
    let aWrote!: () => void;
    const aWritten = new Promise<void>((resolve) => (aWrote = resolve));
    const aDone = store.db.transaction().execute(async (trx) => {
      await publish(trx, store.dialect, event('A'));
      aWrote();
      await aMayCommit;
    });
    await aWritten;
    let bCommitted = false;
    const bDone = store.db
      .transaction()
      .execute((trx) => publish(trx, store.dialect, event('B')))
      .then(() => (bCommitted = true));
    // A publisher that waited for A (a lock) would not commit before it: the test goes on.
    await Promise.race([bDone, pause(1_000)]);
    await pause(500);

    // The first stream stops where it is, and a new one resumes from its last event.
    first.close();
    const lastSeen = first.events.at(-1)!;
    const resumed = await stream(a, lastSeen.id);
    releaseA();
    await Promise.all([aDone, bDone]);
    expect(bCommitted).toBe(true);
    const ids = await store.db.selectFrom('live_events').select(['id', 'data']).where('family_id', '=', familyId).orderBy('id').execute();
    const idOf = (name: string): number => Number(ids.find((r) => (JSON.parse(r.data) as { ids: { groupId: string } }).ids.groupId === name)?.id);
    expect(idOf('A')).toBeLessThan(idOf('B'));

    // Together, the first stream and the resumed one have each event once; the one that followed
    // throughout has both.
    for (const name of ['A', 'B']) {
      if (!first.events.some((e) => e.data.ids.groupId === name)) await resumed.waitFor((e) => e.data.ids.groupId === name);
      await following.waitFor((e) => e.data.ids.groupId === name);
    }
    const names = [...first.events, ...resumed.events].map((e) => e.data.ids.groupId as string);
    expect(names.filter((n) => n !== 'before').sort()).toEqual(['A', 'B']);
    expect(following.events.map((e) => e.data.ids.groupId as string).sort()).toEqual(['A', 'B', 'before']);
  });
});
