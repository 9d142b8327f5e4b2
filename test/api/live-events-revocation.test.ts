import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/dialect.js';
import { openStore } from '../../src/db/store.js';
import { ALL_USER_SCOPES, errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { createCard, expectStatus, familyOf, newFamilyId, newUser, putFamily, VIEW } from '../support/fixtures.js';
import { openEventStream, pause, type EventStreamClient } from '../support/event-stream.js';
import { testDialect } from '../support/test-database.js';

/**
 * Issue 33, rows 2, 3 and 12, through a listening server: a stream ends once its reader loses
 * the right to read it (a removed player, a member who left; the account's disabling is in
 * live-events-instances.test.ts, through the command line), and at the latest at the next
 * heartbeat when no event said so; players are capped per family, and their streams count
 * against the family; a new member's stream replays nothing of the family from before joining.
 */

const HEARTBEAT_SECONDS = 1;
let t: TestApp;
let base: string;
let store: Store;
const open: EventStreamClient[] = [];

beforeAll(async () => {
  t = await startTestApp({ EVENTS_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS), PLAYERS_MAX_PER_FAMILY: '20' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  store = openStore(t.config.database);
});
afterAll(async () => {
  for (const s of open) s.close();
  await store?.db.destroy();
  await t.close();
});

async function stream(token: string, lastEventId?: string): Promise<EventStreamClient> {
  const s = await openEventStream(base, token, { lastEventId });
  open.push(s);
  return s;
}

async function register(memberToken: string, name: string): Promise<{ deviceId: string; token: string }> {
  const r = expectStatus(await t.call('POST', '/device-v2/devices/mine', { token: memberToken, body: { name } }), 201);
  return { deviceId: r.body.device.deviceId, token: r.body.credential.accessToken };
}

/** Resolves when the stream ends; fails the test when it is still open after `ms`. */
async function endsWithin(s: EventStreamClient, ms: number): Promise<void> {
  const ended = await Promise.race([s.ended.then(() => true), pause(ms).then(() => false)]);
  expect(ended, `the stream is still open after ${ms} ms; comments ${JSON.stringify(s.comments)}`).toBe(true);
}

/** A family with a parent, a second member and a player the parent registered, each streaming. */
async function streamingFamily(): Promise<{
  familyId: string;
  parent: string;
  other: string;
  parentToken: string;
  player: { deviceId: string; token: string };
  streams: { parent: EventStreamClient; other: EventStreamClient; player: EventStreamClient };
}> {
  const [parent, other] = [newUser('parent'), newUser('other')];
  const familyId = await familyOf(t, [parent, other]);
  const parentToken = await t.token(parent, ALL_USER_SCOPES);
  const player = await register(parentToken, 'Kitchen');
  const streams = { parent: await stream(parentToken), other: await stream(await t.token(other, VIEW)), player: await stream(player.token) };
  expect([streams.parent.status, streams.other.status, streams.player.status]).toEqual([200, 200, 200]);
  return { familyId, parent, other, parentToken, player, streams };
}

describe(`live events end when the right to read them goes, ${testDialect()}`, () => {
  it.each([
    {
      how: 'the player is removed (DELETE /device-v2/{id})',
      revoke: async (f: Awaited<ReturnType<typeof streamingFamily>>) => {
        expectStatus(await t.call('DELETE', `/device-v2/${f.player.deviceId}`, { token: f.parentToken }), 200);
      },
      parentEnds: false,
    },
    {
      how: 'an operator leaves the player out of the family (PUT /admin/families)',
      revoke: async (f: Awaited<ReturnType<typeof streamingFamily>>) => {
        expectStatus(await putFamily(t, f.familyId, { members: [f.parent, f.other].map((userId) => ({ userId, approved: true })) }), 200);
      },
      parentEnds: false,
    },
    {
      how: 'the member it acts through leaves the family',
      revoke: async (f: Awaited<ReturnType<typeof streamingFamily>>) => {
        expectStatus(await putFamily(t, f.familyId, { members: [{ userId: f.other, approved: true }] }), 200);
      },
      parentEnds: true,
    },
  ])("the player's stream ends at once when $how, and sees nothing after", async ({ revoke, parentEnds }) => {
    const f = await streamingFamily();
    await revoke(f);
    // At once: well before a heartbeat's re-check could have ended it.
    await endsWithin(f.streams.player, 900);
    expect(f.streams.player.comments.at(-1)).toMatch(/removed|family changed/);
    // The member who left loses their own stream too (it followed the family); the other stays.
    if (parentEnds) await endsWithin(f.streams.parent, 900);
    else expect(f.streams.parent.isEnded()).toBe(false);
    expect(f.streams.other.isEnded()).toBe(false);
    // The family goes on: its next player, and its streams, do not reach the removed player.
    const next = await register(await t.token(f.other, ALL_USER_SCOPES), 'Kitchen again');
    await f.streams.other.waitFor((e) => e.event === 'player.added' && e.data.ids.deviceId === next.deviceId, 10_000);
    expect(f.streams.player.events.filter((e) => e.event === 'player.added')).toEqual([]);
    // And it cannot come back.
    const again = await stream(f.player.token);
    expect(again.status).toBe(401);
  });

  it('a re-registered player: the old stream ends with the removal and never sees the new registration or its commands', async () => {
    const f = await streamingFamily();
    expectStatus(await t.call('PUT', `/device-v2/${f.player.deviceId}/status`, { token: f.player.token, body: {} }), 200);
    expectStatus(await t.call('DELETE', `/device-v2/${f.player.deviceId}`, { token: f.parentToken }), 200);
    const again = await register(f.parentToken, 'Kitchen');
    const newStream = await stream(again.token);
    expect(newStream.status).toBe(200);
    expectStatus(await t.call('PUT', `/device-v2/${again.deviceId}/status`, { token: again.token, body: {} }), 200);
    const card = await createCard(t, f.parent);
    expectStatus(
      await t.call('POST', `/device-v2/${again.deviceId}/command`, { token: f.parentToken, body: { command: 'card-play', cardId: card.cardId } }),
      200,
    );
    await newStream.waitFor((e) => e.event === 'player.command', 10_000);
    await endsWithin(f.streams.player, 100);
    const seen = f.streams.player.events.map((e) => e.event);
    expect(seen).not.toContain('player.command');
    expect(seen).not.toContain('player.added');
    expect(seen.at(-1)).toBe('player.removed');
  });

  it('a stream whose player vanished without an event ends at the next heartbeat', async () => {
    const f = await streamingFamily();
    // No event of the log says so (a row removed by hand): only the heartbeat's check can see it.
    await store.db.deleteFrom('family_devices').where('device_id', '=', f.player.deviceId).execute();
    // What ends it is the heartbeat's check (its comment says so); no event could, there being none.
    await endsWithin(f.streams.player, 2 * HEARTBEAT_SECONDS * 1000 + 1000);
    expect(f.streams.player.comments.at(-1)).toBe('no longer allowed to read these events');
    expect(f.streams.parent.isEnded()).toBe(false);
  });
});

describe(`players per family, and their streams, are capped, ${testDialect()}`, () => {
  it('refuses the 21st player with 400 device-limit, and takes one again once a player is removed', async () => {
    const parent = newUser('parent');
    await familyOf(t, [parent]);
    const token = await t.token(parent, ALL_USER_SCOPES);
    const players = [];
    for (let i = 0; i < 20; i++) players.push(await register(token, `Player ${i}`));
    const refused = await t.call('POST', '/device-v2/devices/mine', { token, body: { name: 'One too many' } });
    expect(refused.status).toBe(400);
    expect(errorCode(refused)).toBe('device-limit');
    expect(refused.body.error.message).toMatch(/at most 20 players/);
    const listed = expectStatus(await t.call('GET', '/device-v2/devices/mine', { token }), 200);
    expect(listed.body.devices).toHaveLength(20);
    expectStatus(await t.call('DELETE', `/device-v2/${players[0]!.deviceId}`, { token }), 200);
    await register(token, 'In its place');
  });

  it('30 registrations at once leave exactly 20 players', async () => {
    const [a, b] = [newUser('a'), newUser('b')];
    await familyOf(t, [a, b]);
    const tokens = [await t.token(a, ALL_USER_SCOPES), await t.token(b, ALL_USER_SCOPES)];
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) => t.call('POST', '/device-v2/devices/mine', { token: tokens[i % 2], body: { name: `P${i}` } })),
    );
    const outcomes = replies.map((r) => (r.status === 201 ? '201' : `${r.status} ${errorCode(r)}`));
    expect(outcomes.filter((o) => o === '201')).toHaveLength(20);
    expect(outcomes.filter((o) => o === '400 device-limit')).toHaveLength(10);
    const listed = expectStatus(await t.call('GET', '/device-v2/devices/mine', { token: tokens[0] }), 200);
    expect(listed.body.devices).toHaveLength(20);
  });
});

describe(`player streams count against their family, ${testDialect()}`, () => {
  it("refuses a family's players more streams than its budget, and leaves its members' own places alone", async () => {
    const local = await startTestApp({ PLAYERS_MAX_PER_FAMILY: '3', EVENTS_MAX_STREAMS_PER_USER: '2' });
    const opened: EventStreamClient[] = [];
    try {
      await local.app.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(local.app.server.address() as AddressInfo).port}`;
      const open = async (token: string): Promise<EventStreamClient> => {
        const s = await openEventStream(url, token);
        opened.push(s);
        return s;
      };
      const parent = newUser('parent');
      const familyId = newFamilyId();
      const admin = await local.token('auth0|operator', 'admin');
      expectStatus(await local.call('PUT', `/admin/families/${familyId}`, { token: admin, body: { country: 'US', members: [{ userId: parent }] } }), 201);
      const parentToken = await local.token(parent, ALL_USER_SCOPES);
      const players = [];
      for (let i = 0; i < 3; i++) {
        const r = expectStatus(await local.call('POST', '/device-v2/devices/mine', { token: parentToken, body: { name: `P${i}` } }), 201);
        players.push(r.body.credential.accessToken as string);
      }
      // Each player one stream: the family's budget (3) is spent, though each player may hold 2.
      expect(await Promise.all(players.map(async (p) => (await open(p)).status))).toEqual([200, 200, 200]);
      const beyond = await open(players[0]!);
      expect(beyond.status).toBe(429);
      expect(beyond.headers['retry-after']).toMatch(/^\d+$/);
      const body = await beyond.errorBody();
      expect(body.error.code).toBe('rate-limited');
      expect(body.error.message).toMatch(/players of a family may hold at most 3/);
      // The parent's own streams have their own places.
      expect((await open(parentToken)).status).toBe(200);
      // A player's stream that closes gives its family's place back.
      opened[0]!.close();
      await pause(200);
      expect((await open(players[1]!)).status).toBe(200);
    } finally {
      for (const s of opened) s.close();
      await local.close();
    }
  });
});

describe(`a new member replays nothing of the family from before joining, ${testDialect()}`, () => {
  it('Last-Event-ID: 0 gives the family events after the joining only, and the member its own', async () => {
    const [parent, newcomer] = [newUser('parent'), newUser('newcomer')];
    const familyId = await familyOf(t, [parent]);
    const parentToken = await t.token(parent, ALL_USER_SCOPES);
    // The family's history before the newcomer: a player, its status, a command, a group.
    const player = await register(parentToken, 'Kitchen');
    expectStatus(await t.call('PUT', `/device-v2/${player.deviceId}/status`, { token: player.token, body: {} }), 200);
    expectStatus(await t.call('POST', `/device-v2/${player.deviceId}/command`, { token: parentToken, body: { command: 'pause' } }), 200);
    expectStatus(await t.call('POST', '/card/family/library/groups', { token: parentToken, body: { name: 'Before', imageId: 'i', items: [] } }), 201);
    // The newcomer's own event, from before joining (a wishlist of theirs): theirs to replay.
    const newcomerToken = await t.token(newcomer, ALL_USER_SCOPES);
    expectStatus(await t.call('POST', '/wishlists', { token: newcomerToken, body: { name: 'Mine', content: [] } }), 201);
    expectStatus(await putFamily(t, familyId, { members: [parent, newcomer].map((userId) => ({ userId, approved: true })) }), 200);
    const after = expectStatus(
      await t.call('POST', '/card/family/library/groups', { token: parentToken, body: { name: 'After', imageId: 'i', items: [] } }),
      201,
    );

    const replay = await stream(await t.token(newcomer, VIEW), '0');
    expect(replay.status).toBe(200);
    await replay.waitFor((e) => e.event === 'group.created' && e.data.ids.groupId === after.body.id, 10_000);
    const kinds = replay.events.map((e) => e.event);
    expect(kinds).toEqual(['wishlist.created', 'family.changed', 'group.created']);
    expect(replay.events.some((e) => e.data.sentBy !== undefined)).toBe(false);

    // The parent, there from the start, still replays the whole of it.
    const parentReplay = await stream(await t.token(parent, VIEW), '0');
    await parentReplay.waitFor((e) => e.event === 'group.created' && e.data.ids.groupId === after.body.id, 10_000);
    expect(parentReplay.events.map((e) => e.event)).toEqual(
      expect.arrayContaining(['player.added', 'player.status', 'player.command', 'group.created', 'family.changed']),
    );
  });
});
