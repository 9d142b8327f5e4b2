import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/store.js';
import { publish } from '../../src/modules/events/publish.js';
import { cardBody, errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { expectStatus, familyOf, newUser, putCatalogueCard, putFamily, VIEW } from '../support/fixtures.js';
import { openEventStream, pause, type EventStreamClient, type StreamEvent } from '../support/event-stream.js';
import { testDialect } from '../support/test-database.js';

/**
 * `GET /user/family/events` (issue 21) through real HTTP: each kind of change reaches every
 * member who may see it and no one else; resume; reset; limits; slow readers; shutdown.
 */

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

const ids = (events: StreamEvent[]): number[] => events.map((e) => Number(e.id));

describe(`live events on ${testDialect()}`, () => {
  let t: TestApp;
  let base: string;
  const open: EventStreamClient[] = [];
  const stream = async (userId: string, opts: Parameters<typeof openEventStream>[2] = {}): Promise<EventStreamClient> => {
    const s = await openEventStream(base, await t.token(userId, VIEW), opts);
    open.push(s);
    return s;
  };
  const asUser = async (userId: string) => t.token(userId);

  beforeAll(async () => {
    t = await startTestApp({ EVENTS_HEARTBEAT_SECONDS: '1', CORS_ORIGIN: 'https://app.example', LOG_LEVEL: 'warn' });
    base = await listen(t);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t.close();
  });

  it('sends each change to every member who may see it, and to no one else (cross-family matrix)', async () => {
    const [a, b, c, loner] = [newUser('a'), newUser('b'), newUser('c'), newUser('loner')];
    const f1 = await familyOf(t, [a, b]);
    await familyOf(t, [c]);
    const free = await putCatalogueCard(t, 'free');
    const streams = { a: await stream(a), b: await stream(b), c: await stream(c), loner: await stream(loner) };
    for (const s of Object.values(streams)) {
      expect(s.status).toBe(200);
      expect(s.headers['content-type']).toMatch(/^text\/event-stream/);
    }

    // The library: a's add reaches a and b, with the tag b's read answers.
    expectStatus(await t.call('POST', '/card/family/library', { token: await asUser(a), body: { cardId: free } }), 201);
    const added = await streams.b.waitFor((e) => e.event === 'library.added');
    expect(added.data).toMatchObject({ kind: 'library.added', ids: { cardId: free }, read: '/card/family/library' });
    const library = await t.call('GET', '/card/family/library', { token: await asUser(b) });
    expect(added.data.tag).toBe(library.headers.etag);

    // Groups: created, changed, deleted; each tag is the one its read answers.
    const created = expectStatus(
      await t.call('POST', '/card/family/library/groups', { token: await asUser(a), body: { name: 'Bedtime', imageId: 'img1', items: [] } }),
      201,
    );
    const groupId = created.body.id as string;
    const groupEvent = await streams.b.waitFor((e) => e.event === 'group.created');
    const groupRead = await t.call('GET', `/card/family/library/groups/${groupId}`, { token: await asUser(b) });
    expect(groupEvent.data).toMatchObject({ ids: { groupId }, read: `/card/family/library/groups/${groupId}`, tag: groupRead.headers.etag });
    expectStatus(await t.call('PUT', `/card/family/library/groups/${groupId}`, { token: await asUser(b), body: { name: 'Naps' } }), 200);
    const changed = await streams.a.waitFor((e) => e.event === 'group.changed');
    expect(changed.data.tag).toBe((await t.call('GET', `/card/family/library/groups/${groupId}`, { token: await asUser(a) })).headers.etag);
    expectStatus(await t.call('DELETE', `/card/family/library/groups/${groupId}`, { token: await asUser(a) }), 200);
    const deleted = await streams.b.waitFor((e) => e.event === 'group.deleted');
    expect(deleted.data.tag).toBe((await t.call('GET', '/card/family/library/groups', { token: await asUser(b) })).headers.etag);

    // A member's MYO card: created, changed, deleted, to the family.
    const card = expectStatus(await t.call('POST', '/content', { token: await asUser(b), body: cardBody('Mine') }), 201);
    const cardId = card.body.card.cardId as string;
    const cardEvent = await streams.a.waitFor((e) => e.event === 'card.created');
    expect(cardEvent.data).toMatchObject({ ids: { cardId, userId: b }, read: `/content/${cardId}` });
    expect(cardEvent.data.tag).toBe((await t.call('GET', `/content/${cardId}`, { token: await asUser(a) })).headers.etag);
    expectStatus(await t.call('POST', '/content', { token: await asUser(b), body: { ...cardBody('Mine, again'), cardId } }), 200);
    await streams.a.waitFor((e) => e.event === 'card.changed' && e.data.ids.cardId === cardId);
    expectStatus(await t.call('DELETE', `/content/${cardId}`, { token: await asUser(b) }), 200);
    await streams.a.waitFor((e) => e.event === 'card.deleted' && e.data.ids.cardId === cardId);

    // A wishlist is its owner's alone.
    const wish = expectStatus(await t.call('POST', '/wishlists', { token: await asUser(a), body: { content: [] } }), 201);
    const wishEvent = await streams.a.waitFor((e) => e.event === 'wishlist.created');
    expect(JSON.stringify(wish.body)).toContain(wishEvent.data.ids.wishlistId);
    expect(wishEvent.data.tag).toBe((await t.call('GET', '/wishlists?format=raw', { token: await asUser(a) })).headers.etag);

    // The loner's own card reaches the loner alone.
    expectStatus(await t.call('POST', '/content', { token: await asUser(loner), body: cardBody('Alone') }), 201);
    await streams.loner.waitFor((e) => e.event === 'card.created');

    // Membership: c joins family 1, leaving their own; both families hear it, and c's stream ends
    // (it followed the old family).
    const putMembers = await putFamily(t, f1, { members: [a, b, c].map((userId) => ({ userId, approved: true })) });
    expectStatus(putMembers, 200);
    const familyEvent = await streams.a.waitFor((e) => e.event === 'family.changed' && e.data.ids.familyId === f1);
    expect(familyEvent.data.tag).toBe((await t.call('GET', '/user/family', { token: await asUser(a) })).headers.etag);
    await streams.c.waitFor((e) => e.event === 'family.changed' && e.data.ids.userId === c);
    await streams.c.ended;

    // A last write of each reader's own: once it arrived, everything before it has too.
    for (const [who, s] of [
      [a, streams.a],
      [b, streams.b],
      [loner, streams.loner],
    ] as const) {
      expectStatus(await t.call('POST', '/wishlists', { token: await asUser(who), body: { content: [] } }), 201);
      await s.waitFor((e) => e.event === 'wishlist.created' && e.data.ids.wishlistId !== wishEvent.data.ids.wishlistId);
    }
    const kinds = (s: EventStreamClient): string[] => s.events.map((e) => e.event);
    expect(kinds(streams.a)).toEqual([
      'library.added',
      'group.created',
      'group.changed',
      'group.deleted',
      'card.created',
      'card.changed',
      'card.deleted',
      'wishlist.created',
      'family.changed',
      'wishlist.created',
    ]);
    // b: the same, but a's first wishlist.
    expect(kinds(streams.b)).toEqual([
      'library.added',
      'group.created',
      'group.changed',
      'group.deleted',
      'card.created',
      'card.changed',
      'card.deleted',
      'family.changed',
      'wishlist.created',
    ]);
    // c saw nothing of family 1 before joining it; only its own family's change and its own move.
    expect(kinds(streams.c)).toEqual(['family.changed', 'family.changed']);
    expect(kinds(streams.loner)).toEqual(['card.created', 'wishlist.created']);
    // Ids only grow along a stream.
    for (const s of Object.values(streams)) expect(ids(s.events)).toEqual([...ids(s.events)].sort((x, y) => x - y));
  });

  it('sends library.removed (and library.added back) to every family holding a catalogue card an operator deletes (and restores), and to no one else', async () => {
    const [a, b, c, d, loner] = [newUser('a'), newUser('b'), newUser('c'), newUser('d'), newUser('loner')];
    await familyOf(t, [a, b]);
    await familyOf(t, [c]);
    await familyOf(t, [d]);
    const card = await putCatalogueCard(t, 'free');
    const other = await putCatalogueCard(t, 'free');
    // Families 1 and 2 hold the card; family 3 holds another one only.
    for (const [who, cardId] of [[a, card], [c, card], [d, other]] as const) {
      expectStatus(await t.call('POST', '/card/family/library', { token: await asUser(who), body: { cardId } }), 201);
    }
    const streams = { a: await stream(a), b: await stream(b), c: await stream(c), d: await stream(d), loner: await stream(loner) };

    await putCatalogueCard(t, 'free', { cardId: card, extra: { deleted: true } });
    for (const [who, s] of [[b, streams.b], [c, streams.c], [a, streams.a]] as const) {
      const removed = await s.waitFor((e) => e.event === 'library.removed');
      expect(removed.data).toMatchObject({ kind: 'library.removed', ids: { cardId: card }, read: '/card/family/library' });
      // The tag the reader's library answers with now (the card gone from it).
      const library = await t.call('GET', '/card/family/library', { token: await asUser(who) });
      expect(removed.data.tag).toBe(library.headers.etag);
      expect(JSON.stringify(library.body)).not.toContain(card);
    }
    // The record ids are the families' own.
    expect(streams.a.events[0]?.data.ids.recordId).toBe(streams.b.events[0]?.data.ids.recordId);
    expect(streams.a.events[0]?.data.ids.recordId).not.toBe(streams.c.events[0]?.data.ids.recordId);

    // Brought back, it re-enters the same libraries.
    await putCatalogueCard(t, 'free', { cardId: card });
    for (const s of [streams.a, streams.b, streams.c]) await s.waitFor((e) => e.event === 'library.added' && e.data.ids.cardId === card);
    // A catalogue write that changes no library's holdings sends nothing.
    await putCatalogueCard(t, 'free', { cardId: other, title: 'Renamed' });

    // A last write of each reader's own: once it arrived, everything before it has too.
    for (const [who, s] of Object.entries({ [a]: streams.a, [c]: streams.c, [d]: streams.d, [loner]: streams.loner })) {
      expectStatus(await t.call('POST', '/wishlists', { token: await asUser(who), body: { content: [] } }), 201);
      await s.waitFor((e) => e.event === 'wishlist.created');
    }
    const kinds = (s: EventStreamClient): string[] => s.events.map((e) => e.event);
    expect(kinds(streams.a)).toEqual(['library.removed', 'library.added', 'wishlist.created']);
    expect(kinds(streams.b)).toEqual(['library.removed', 'library.added']);
    expect(kinds(streams.c)).toEqual(['library.removed', 'library.added', 'wishlist.created']);
    expect(kinds(streams.d)).toEqual(['wishlist.created']);
    expect(kinds(streams.loner)).toEqual(['wishlist.created']);
  });

  it('resumes with Last-Event-ID (header or query) and misses nothing', async () => {
    const [a, b] = [newUser('a'), newUser('b')];
    await familyOf(t, [a, b]);
    const first = await stream(b);
    const free = await putCatalogueCard(t, 'free');
    expectStatus(await t.call('POST', '/card/family/library', { token: await asUser(a), body: { cardId: free } }), 201);
    const seen = await first.waitFor((e) => e.event === 'library.added');
    first.close();
    // Missed while away: three changes.
    const groupIds: string[] = [];
    for (const name of ['One', 'Two', 'Three']) {
      const r = await t.call('POST', '/card/family/library/groups', { token: await asUser(a), body: { name, imageId: 'i', items: [] } });
      groupIds.push(expectStatus(r, 201).body.id as string);
    }
    for (const opts of [{ lastEventId: seen.id }, { query: `?lastEventId=${seen.id}` }]) {
      const again = await stream(b, opts);
      await again.waitFor((e) => e.data.ids?.groupId === groupIds[2]);
      expect(again.events.map((e) => [e.event, e.data.ids.groupId])).toEqual(groupIds.map((id) => ['group.created', id]));
      again.close();
    }
    // Without an id: only what comes next.
    const fresh = await stream(b);
    await pause(300);
    expect(fresh.events).toEqual([]);
  });

  it('refuses a Last-Event-ID that is no id (400), and sends reset for one beyond the log', async () => {
    const user = newUser('resume');
    const bad = await openEventStream(base, await t.token(user, VIEW), { lastEventId: 'abc' });
    expect(bad.status).toBe(400);
    expect((await bad.errorBody()).error.code).toBe('bad-request');
    const badQuery = await t.call('GET', '/user/family/events?lastEventId=-1', { token: await t.token(user, VIEW) });
    expect(errorCode(expectStatus(badQuery, 400))).toBe('bad-request');
    const beyond = await stream(user, { lastEventId: '999999999999' });
    const reset = await beyond.waitFor((e) => e.event === 'reset');
    expect(reset.data).toEqual({ kind: 'reset' });
  });

  it('needs the family library view scope, and answers CORS as the rest of the API', async () => {
    const user = newUser('scope');
    const r = await t.call('GET', '/user/family/events', { token: await t.token(user, 'user:content:manage') });
    expect(r.status).toBe(403);
    const s = await stream(user, { headers: { origin: 'https://app.example' } });
    expect(s.status).toBe(200);
    expect(s.headers['access-control-allow-origin']).toBe('https://app.example');
  });

  it('sends heartbeat comment lines while idle', async () => {
    const s = await stream(newUser('idle'));
    await pause(2_300);
    expect(s.comments.filter((c) => c === '').length).toBeGreaterThanOrEqual(2);
  });

  it('ends the stream when the token expires', async () => {
    const user = newUser('expiring');
    const s = await openEventStream(base, await t.token(user, VIEW, '2s'));
    open.push(s);
    expect(s.status).toBe(200);
    await s.ended;
    expect(s.comments.some((c) => c.startsWith('token expired'))).toBe(true);
  });
});

describe(`live events: limits, slow readers, the log's window, shutdown on ${testDialect()}`, () => {
  it('limits open streams per user and per instance: 429 with Retry-After', async () => {
    const t = await startTestApp({ EVENTS_MAX_STREAMS_PER_USER: '2', EVENTS_MAX_STREAMS: '3' });
    try {
      const base = await listen(t);
      const [a, b] = [newUser('a'), newUser('b')];
      const first = [await openEventStream(base, await t.token(a, VIEW)), await openEventStream(base, await t.token(a, VIEW))];
      expect(first.map((s) => s.status)).toEqual([200, 200]);
      const third = await openEventStream(base, await t.token(a, VIEW));
      expect(third.status).toBe(429);
      expect(third.headers['retry-after']).toMatch(/^\d+$/);
      expect((await third.errorBody()).error.code).toBe('rate-limited');
      // The instance's bound: one more for b fits, then none.
      expect((await openEventStream(base, await t.token(b, VIEW))).status).toBe(200);
      expect((await openEventStream(base, await t.token(b, VIEW))).status).toBe(429);
      // A closed stream gives its place back.
      first[0]!.close();
      await pause(200);
      const again = await openEventStream(base, await t.token(a, VIEW));
      expect(again.status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('drops a slow reader while the others keep flowing', async () => {
    const t = await startTestApp({ EVENTS_STREAM_BUFFER_BYTES: String(4 * 1024 * 1024) });
    const store = openStore(t.config.database);
    try {
      const base = await listen(t);
      const [slow, quick] = [newUser('slow'), newUser('quick')];
      const familyId = await familyOf(t, [slow, quick]);
      const slowStream = await openEventStream(base, await t.token(slow, VIEW));
      const quickStream = await openEventStream(base, await t.token(quick, VIEW));
      slowStream.pause();
      // Big events, published as any module publishes them: 25 MB, beyond what the sockets'
      // buffers and the bound hold.
      const blob = 'x'.repeat(64 * 1024);
      const COUNT = 400;
      // Each step bounded, so that a failure says which one did not end.
      const within = <T>(what: string, ms: number, promise: Promise<T>): Promise<T> =>
        Promise.race([promise, pause(ms).then(() => Promise.reject(new Error(`${what}: not within ${ms} ms`)))]);
      let published = 0;
      for (let i = 0; i < COUNT; i += 10) {
        await within(`the publishing transaction after ${published} events`, 20_000, store.db.transaction().execute(async (trx) => {
          for (let j = i; j < i + 10; j++) {
            await publish(trx, store.dialect, { kind: 'group.changed', audience: { familyId }, ids: { groupId: `g${j}` }, read: '/card/family/library/groups', tag: blob });
          }
        }));
        published += 10;
        await pause(20);
      }
      // 25 MB through a loopback socket and the log: seconds here, more on a loaded machine.
      await quickStream.waitFor((e) => e.data.ids?.groupId === `g${COUNT - 1}`, 60_000);
      expect(quickStream.events.length).toBe(COUNT);
      // The bound is checked when more comes (fan-out.ts `write`): one read of the log may have
      // brought all of them at once, the slow reader's share in one write. One more event then.
      await store.db.transaction().execute((trx) =>
        publish(trx, store.dialect, { kind: 'group.changed', audience: { familyId }, ids: { groupId: 'last' }, read: '/card/family/library/groups', tag: '"t"' }),
      );
      await quickStream.waitFor((e) => e.data.ids?.groupId === 'last', 20_000);
      // The slow reader reads again: what was sent before the drop, then the end of the connection.
      slowStream.resume();
      await within('the slow stream’s end', 20_000, slowStream.ended);
      expect(slowStream.events.length).toBeLessThan(COUNT + 1);
    } finally {
      await store.db.destroy();
      await t.close();
    }
  }, 120_000);

  // Every stream of a test app is checked against the document (test/support/test-app.ts): each event's
  // data must be its kind's schema (src/modules/events/catalogue.ts). So every suite that reads
  // events checks them; these show the check holds.
  it.each([
    ['a field its kind does not have', { kind: 'group.changed', ids: { groupId: 'g1' }, read: '/x', tag: '"t"', extra: 1 }, /must NOT have additional properties/],
    ['an id its kind does not name', { kind: 'player.added', ids: { cardId: 'c1' }, read: '/x' }, /data\/ids must have required property 'deviceId'/],
    ['a field of another type', { kind: 'link.changed', ids: { linkId: 'l1' }, read: '/x', state: 'gone' }, /data\/state/],
    ['a command that is no DeviceCommand', { kind: 'player.command', ids: { deviceId: 'd', commandId: 'c' }, command: { command: 'volume' }, sentBy: 'u' }, /data\/command/],
  ])('fails a test app whose stream sends an event its kind does not describe: %s', async (_name, data, message) => {
    const t = await startTestApp();
    let closed = false;
    try {
      const base = await listen(t);
      const user = newUser('checked');
      const familyId = await familyOf(t, [user]);
      const s = await openEventStream(base, await t.token(user, VIEW));
      const store = openStore(t.config.database);
      try {
        // Past the types (they refuse all of these), as a slip in a module would be.
        await store.db.transaction().execute((trx) => publish(trx, store.dialect, { audience: { familyId }, ...data } as never));
      } finally {
        await store.db.destroy();
      }
      await s.waitFor((e) => e.event === data.kind);
      s.close();
      closed = true;
      await expect(t.close()).rejects.toThrow(message);
    } finally {
      if (!closed) await t.close();
    }
  });

  it("sends one reset for a Last-Event-ID older than the log's window", async () => {
    const t = await startTestApp({ EVENTS_RETENTION_SECONDS: '1' });
    try {
      const base = await listen(t);
      const [a, b] = [newUser('a'), newUser('b')];
      await familyOf(t, [a, b]);
      const s = await openEventStream(base, await t.token(b, VIEW));
      expectStatus(await t.call('POST', '/card/family/library/groups', { token: await t.token(a), body: { name: 'Old', imageId: 'i', items: [] } }), 201);
      const old = await s.waitFor((e) => e.event === 'group.created');
      s.close();
      // Missed, and then pruned: the client cannot learn of it from the log.
      expectStatus(await t.call('POST', '/card/family/library/groups', { token: await t.token(a), body: { name: 'Missed', imageId: 'i', items: [] } }), 201);
      // Pruned within a second or two of getting a second old.
      await pause(3_000);
      expectStatus(await t.call('POST', '/card/family/library/groups', { token: await t.token(a), body: { name: 'New', imageId: 'i', items: [] } }), 201);
      const resumed = await openEventStream(base, await t.token(b, VIEW), { lastEventId: old.id });
      const first = await resumed.waitFor(() => true);
      expect(first.event).toBe('reset');
      // After the reset, nothing replayed (the client refetches everything), then live events.
      await pause(200);
      expect(resumed.events.map((e) => e.event)).toEqual(['reset']);
      expectStatus(await t.call('POST', '/card/family/library/groups', { token: await t.token(a), body: { name: 'Live', imageId: 'i', items: [] } }), 201);
      await resumed.waitFor((e) => e.event === 'group.created');
      resumed.close();
    } finally {
      await t.close();
    }
  }, 20_000);

  it('ends every stream when the server shuts down', async () => {
    const t = await startTestApp();
    const base = await listen(t);
    const streams = [await openEventStream(base, await t.token(newUser('x'), VIEW)), await openEventStream(base, await t.token(newUser('y'), VIEW))];
    const closing = t.close();
    await Promise.all(streams.map((s) => s.ended));
    await closing;
    for (const s of streams) expect(s.comments).toContain('server shutting down; reconnect');
  });

  it('ends the connection with the stream: a keep-alive client does not hold a closing server up', async () => {
    const t = await startTestApp();
    const base = await listen(t);
    // fetch keeps connections alive. A stream ended by the shutdown after its client stopped
    // reading, left open idle, held the close up to the server's keepAliveTimeout (72 s), past
    // this test's bound.
    for (let i = 0; i < 3; i++) {
      const controller = new AbortController();
      const res = await fetch(`${base}/user/family/events`, { headers: { authorization: `Bearer ${await t.token(newUser(`kept${i}`), VIEW)}` }, signal: controller.signal });
      expect(res.status).toBe(200);
      controller.abort();
    }
    await t.close();
  }, 30_000);
});
