import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_USER_SCOPES, startTestApp, type TestApp } from './helpers.js';
import { createCard, expectStatus, familyOf, newUser } from './fixtures.js';
import { testDialect } from './support/test-database.js';

/**
 * Commands and status on the family's live events (issue 22), through a listening server: a
 * command sent to a registered player reaches that player's event stream, and the status it
 * reports comes back to the family's streams.
 */

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await startTestApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => t.close());

interface StreamEvent {
  id: string;
  event: string;
  data: Record<string, any>;
}

/** An open `GET /user/family/events`, read frame by frame. */
interface EventStream {
  /** Waits (at most 10 s) for the first event that matches, and returns it with every event before it. */
  until(match: (e: StreamEvent) => boolean): Promise<{ event: StreamEvent; before: StreamEvent[] }>;
  close(): void;
}

async function openStream(token: string): Promise<EventStream> {
  const abort = new AbortController();
  const res = await fetch(`${base}/user/family/events`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const seen: StreamEvent[] = [];
  async function next(): Promise<StreamEvent> {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = Object.fromEntries(
          block
            .split('\n')
            .filter((line) => line && !line.startsWith(':'))
            .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
        );
        if (fields.data !== undefined) return { id: fields.id, event: fields.event, data: JSON.parse(fields.data) };
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended');
      buffer += value;
    }
  }
  return {
    async until(match) {
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no matching event in 10 s; saw ${JSON.stringify(seen)}`)), 10_000));
      const before: StreamEvent[] = [];
      for (;;) {
        const event = await Promise.race([next(), timeout]);
        seen.push(event);
        if (match(event)) return { event, before };
        before.push(event);
      }
    },
    close: () => abort.abort(),
  };
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

    const playerStream = await openStream(kitchen.token);
    const parentStream = await openStream(parentToken);
    try {
      // The parent's own things (a wishlist) are not the player's to see.
      expectStatus(await t.call('POST', '/wishlists', { token: parentToken, body: { name: 'Birthday', content: [] } }), 201);
      const command = { command: 'card-play', cardId: card.cardId, chapterKey: '01', trackKey: '01' };
      const sent = expectStatus(await t.call('POST', `/device-v2/${kitchen.deviceId}/command`, { token: parentToken, body: command }), 200);

      const received = await playerStream.until((e) => e.event === 'player.command');
      expect(received.event.data).toMatchObject({ kind: 'player.command', ids: { deviceId: kitchen.deviceId, commandId: sent.body.commandId }, command, sentBy: parent });
      expect(received.before.map((e) => e.event)).not.toContain('wishlist.created');

      // The player obeys and reports; the parent's stream shows it playing.
      const playing = { activeCard: card.cardId, chapterKey: '01', trackKey: '01', position: 0, playbackStatus: 'playing' };
      expectStatus(await t.call('PUT', `/device-v2/${kitchen.deviceId}/status`, { token: kitchen.token, body: playing }), 200);
      const status = await parentStream.until((e) => e.event === 'player.status' && e.data.status?.playbackStatus === 'playing');
      expect(status.event.data).toMatchObject({ ids: { deviceId: kitchen.deviceId }, read: `/device-v2/${kitchen.deviceId}/status`, status: { ...playing, isOnline: true } });
      // The parent saw the wishlist event (its own) and the command (the family's) before.
      expect(status.before.map((e) => e.event)).toEqual(expect.arrayContaining(['wishlist.created', 'player.command']));
    } finally {
      playerStream.close();
      parentStream.close();
    }
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
    const strangerStream = await openStream(strangerToken);
    try {
      expectStatus(await t.call('POST', `/device-v2/${kitchen.deviceId}/command`, { token: parentToken, body: { command: 'pause' } }), 200);
      expectStatus(await t.call('PUT', `/device-v2/${kitchen.deviceId}/status`, { token: kitchen.token, body: { playbackStatus: 'paused' } }), 200);
      // An event of the stranger's own family, published after: everything before it was delivered.
      const own = await register(strangerToken, 'Attic');
      const { before } = await strangerStream.until((e) => e.event === 'player.added' && e.data.ids.deviceId === own.deviceId);
      expect(before.filter((e) => e.event.startsWith('player.'))).toEqual([]);
    } finally {
      strangerStream.close();
    }
  });

  it('a removed player cannot open its stream (401)', async () => {
    const parent = newUser('parent');
    await familyOf(t, [parent]);
    const parentToken = await t.token(parent, ALL_USER_SCOPES);
    const kitchen = await register(parentToken, 'Kitchen');
    expectStatus(await t.call('DELETE', `/device-v2/${kitchen.deviceId}`, { token: parentToken }), 200);
    const res = await fetch(`${base}/user/family/events`, { headers: { authorization: `Bearer ${kitchen.token}` } });
    expect(res.status).toBe(401);
    await res.body?.cancel();
  });
});
