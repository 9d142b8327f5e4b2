import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_USER_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { createCard, expectStatus, familyOf, newUser } from '../support/fixtures.js';
import { openEventStream, type EventStreamClient, type StreamEvent } from '../support/event-stream.js';
import { testDialect } from '../support/test-database.js';

/**
 * Commands and status on the family's live events (issue 22), through a listening server: a
 * command sent to a registered player reaches that player's event stream, and the status it
 * reports comes back to the family's streams.
 */

let t: TestApp;
let base: string;
const open: EventStreamClient[] = [];
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of open) s.close();
  await t.close();
});

async function stream(token: string): Promise<EventStreamClient> {
  const s = await openEventStream(base, token);
  open.push(s);
  expect(s.status).toBe(200);
  return s;
}

/** The events a stream received before the first that matches (which it waits for). */
async function before(s: EventStreamClient, match: (e: StreamEvent) => boolean): Promise<{ event: StreamEvent; earlier: StreamEvent[] }> {
  const event = await s.waitFor(match, 10_000);
  return { event, earlier: s.events.slice(0, s.events.indexOf(event)) };
}

async function register(memberToken: string, name: string): Promise<{ deviceId: string; token: string }> {
  const r = expectStatus(await t.call('POST', '/device-v2/devices/mine', { token: memberToken, body: { name } }), 201);
  return { deviceId: r.body.device.deviceId, token: r.body.credential.accessToken };
}

describe(`commands and status on the live events, ${testDialect()}`, () => {
  it("a command reaches the player's stream; the status it reports reaches the parent's stream", async () => {
    const parent = newUser('parent');
    await familyOf(t, [parent]);
    const parentToken = await t.token(parent, ALL_USER_SCOPES);
    const kitchen = await register(parentToken, 'Kitchen');
    const card = await createCard(t, parent);
    expectStatus(await t.call('PUT', `/device-v2/${kitchen.deviceId}/status`, { token: kitchen.token, body: { playbackStatus: 'stopped' } }), 200);

    const playerStream = await stream(kitchen.token);
    const parentStream = await stream(parentToken);
    // The parent's own things (a wishlist) are not the player's to see.
    expectStatus(await t.call('POST', '/wishlists', { token: parentToken, body: { name: 'Birthday', content: [] } }), 201);
    const command = { command: 'card-play', cardId: card.cardId, chapterKey: '01', trackKey: '01' };
    const sent = expectStatus(await t.call('POST', `/device-v2/${kitchen.deviceId}/command`, { token: parentToken, body: command }), 200);

    const received = await before(playerStream, (e) => e.event === 'player.command');
    expect(received.event.data).toMatchObject({ kind: 'player.command', ids: { deviceId: kitchen.deviceId, commandId: sent.body.commandId }, command, sentBy: parent });
    expect(received.earlier.map((e) => e.event)).not.toContain('wishlist.created');

    // The player obeys and reports; the parent's stream shows it playing.
    const playing = { activeCard: card.cardId, chapterKey: '01', trackKey: '01', position: 0, playbackStatus: 'playing' };
    expectStatus(await t.call('PUT', `/device-v2/${kitchen.deviceId}/status`, { token: kitchen.token, body: playing }), 200);
    const status = await before(parentStream, (e) => e.event === 'player.status' && e.data.status?.playbackStatus === 'playing');
    expect(status.event.data).toMatchObject({ ids: { deviceId: kitchen.deviceId }, read: `/device-v2/${kitchen.deviceId}/status`, status: { ...playing, isOnline: true } });
    // The parent saw the wishlist event (its own) and the command (the family's) before.
    expect(status.earlier.map((e) => e.event)).toEqual(expect.arrayContaining(['wishlist.created', 'player.command']));
  });

  it("another family's stream never sees a family's commands or status", async () => {
    const parent = newUser('parent');
    await familyOf(t, [parent]);
    const parentToken = await t.token(parent, ALL_USER_SCOPES);
    const kitchen = await register(parentToken, 'Kitchen');
    expectStatus(await t.call('PUT', `/device-v2/${kitchen.deviceId}/status`, { token: kitchen.token, body: {} }), 200);

    const stranger = newUser('stranger');
    await familyOf(t, [stranger]);
    const strangerToken = await t.token(stranger, ALL_USER_SCOPES);
    const strangerStream = await stream(strangerToken);
    expectStatus(await t.call('POST', `/device-v2/${kitchen.deviceId}/command`, { token: parentToken, body: { command: 'pause' } }), 200);
    expectStatus(await t.call('PUT', `/device-v2/${kitchen.deviceId}/status`, { token: kitchen.token, body: { playbackStatus: 'paused' } }), 200);
    // An event of the stranger's own family, published after: everything before it was delivered.
    const own = await register(strangerToken, 'Attic');
    const { earlier } = await before(strangerStream, (e) => e.event === 'player.added' && e.data.ids.deviceId === own.deviceId);
    expect(earlier.filter((e) => e.event.startsWith('player.'))).toEqual([]);
  });

  it('a removed player cannot open its stream (401)', async () => {
    const parent = newUser('parent');
    await familyOf(t, [parent]);
    const parentToken = await t.token(parent, ALL_USER_SCOPES);
    const kitchen = await register(parentToken, 'Kitchen');
    expectStatus(await t.call('DELETE', `/device-v2/${kitchen.deviceId}`, { token: parentToken }), 200);
    const refused = await openEventStream(base, kitchen.token);
    open.push(refused);
    expect(refused.status).toBe(401);
    expect((await refused.errorBody()).error.code).toBe('unauthorized');
  });
});
