import { connectAsync } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { openEventStream, pause, type EventStreamClient } from '../support/event-stream.js';
import { http, runCli, startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

/**
 * Live events across instances (issue 21): two `cardshelf serve` processes on one database. A
 * write on one reaches the streams of the other: through LISTEN/NOTIFY on PostgreSQL, through
 * the poll of the log on SQLite (as between `serve --workers` processes). And SIGTERM ends the
 * streams of the instance that stops, which still exits 0.
 */
/**
 * The first instance's heartbeat: short, so that a stream whose right to read is gone ends within
 * one (issue 33). The second's is long: a stream there that ends within the test ends by the
 * log's event alone, however slow the machine, never by a heartbeat that came first.
 */
const HEARTBEAT_SECONDS = 1;
const SECOND_HEARTBEAT_SECONDS = 60;
/**
 * How long an end carried by the log's event may take to cross to the other instance. The
 * SQLite poll is 250 ms, but CI runs many process tests on two cores; what proves the end came
 * from the event is the comment it ends with, not the clock.
 */
const EVENT_CROSSING_MS = 5_000;

/** Resolves when the stream ends; fails the test when it is still open after `ms`. */
async function endsWithin(s: EventStreamClient, ms: number): Promise<void> {
  const ended = await Promise.race([s.ended.then(() => true), pause(ms).then(() => false)]);
  expect(ended, `the stream is still open after ${ms} ms; comments ${JSON.stringify(s.comments)}`).toBe(true);
}

describe(`live events between two server processes on one ${testDialect()} database`, () => {
  let deployment: Deployment;
  let servers: ServerProcess[] = [];

  beforeAll(async () => {
    deployment = await createDeployment();
    // The revocation list is read rarely, so what ends a disabled account's streams here is the
    // log's event alone (the list's own reach is test/process/token-revocation.test.ts's).
    const env = { ...deployment.env, TOKEN_REVOCATION_POLL_MS: '60000' };
    servers = await Promise.all([
      startServer({ ...env, EVENTS_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS) }),
      startServer({ ...env, EVENTS_HEARTBEAT_SECONDS: String(SECOND_HEARTBEAT_SECONDS) }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL', 0)));
    await deployment?.close();
  });

  /** A family of `members` (the first registers a player on the first instance); returns the player. */
  async function familyWithPlayer(familyId: string, members: string[]): Promise<{ deviceId: string; token: string }> {
    const admin = await deployment.token('auth0|operator', 'admin');
    const put = await http(servers[0]!.url, 'PUT', `/admin/families/${familyId}`, {
      token: admin,
      body: { country: 'US', members: members.map((userId) => ({ userId, approved: true })) },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const registered = await http(servers[0]!.url, 'POST', '/device-v2/devices/mine', { token: await deployment.token(members[0]!), body: { name: 'Kitchen' } });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    return { deviceId: registered.body.device.deviceId, token: registered.body.credential.accessToken };
  }

  it("ends a removed player's stream on the other instance at once, and one removed behind its back within a heartbeat", async () => {
    const parent = 'auth0|inst-player-parent';
    const kitchen = await familyWithPlayer('inst-player-fam', [parent]);
    const onB = await openEventStream(servers[1]!.url, kitchen.token);
    expect(onB.status).toBe(200);
    const removed = await http(servers[0]!.url, 'DELETE', `/device-v2/${kitchen.deviceId}`, { token: await deployment.token(parent) });
    expect(removed.status).toBe(200);
    await endsWithin(onB, EVENT_CROSSING_MS);
    expect(onB.comments.at(-1)).toBe('player removed from its family');

    // No event says so (a row deleted by hand): the heartbeat's check of the credential ends it
    // (on the first instance, whose heartbeat is short).
    const attic = (await http(servers[0]!.url, 'POST', '/device-v2/devices/mine', { token: await deployment.token(parent), body: { name: 'Attic' } })).body;
    const atticStream = await openEventStream(servers[0]!.url, attic.credential.accessToken);
    expect(atticStream.status).toBe(200);
    await deployment.store().db.deleteFrom('family_devices').where('device_id', '=', attic.device.deviceId).execute();
    await endsWithin(atticStream, 2 * HEARTBEAT_SECONDS * 1000 + EVENT_CROSSING_MS);
    expect(atticStream.comments.at(-1)).toBe('no longer allowed to read these events');
  }, 60_000);

  it("`cardshelf user disable` ends the account's streams and its players' on every instance at once", async () => {
    const parent = 'auth0|inst-disabled-parent';
    const added = runCli(['user', 'add', '--email', 'disabled-parent@example.com', '--name', 'Parent', '--user-id', parent], deployment.env);
    expect((await added.exited).code, added.stderr()).toBe(0);
    const kitchen = await familyWithPlayer('inst-disabled-fam', [parent]);
    const streams = [
      await openEventStream(servers[0]!.url, await deployment.token(parent, 'family:library:view')),
      await openEventStream(servers[1]!.url, await deployment.token(parent, 'family:library:view')),
      await openEventStream(servers[1]!.url, kitchen.token),
    ];
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);
    const disabled = runCli(['user', 'disable', parent], deployment.env);
    expect((await disabled.exited).code, disabled.stderr()).toBe(0);
    for (const s of streams) await endsWithin(s, EVENT_CROSSING_MS);
    expect(streams[1]!.events.at(-1)?.event).toBe('account.disabled');
    expect(streams.map((s) => s.comments.at(-1))).toEqual(['account disabled', 'account disabled', 'account disabled']);
    // And a new stream of the account is refused.
    const refused = await openEventStream(servers[1]!.url, await deployment.token(parent, 'family:library:view'));
    expect(refused.status).toBe(401);
  }, 60_000);

  it('an app on one instance controls over MQTT a player whose stream is on the other, and sees its reports', async () => {
    const parent = 'auth0|inst-mqtt-parent';
    const kitchen = await familyWithPlayer('inst-mqtt-fam', [parent]);
    const playerStream = await openEventStream(servers[1]!.url, kitchen.token);
    expect(playerStream.status).toBe(200);
    expect((await http(servers[1]!.url, 'PUT', `/device-v2/${kitchen.deviceId}/status`, { token: kitchen.token, body: { playbackStatus: 'stopped' } })).status).toBe(200);
    const app = await connectAsync(`${servers[0]!.url.replace(/^http/, 'ws')}/mqtt`, {
      username: `${kitchen.deviceId}?x-amz-customauthorizer-name=PublicJWTAuthorizer`,
      password: await deployment.token(parent, 'family:library:view family:library:manage'),
      reconnectPeriod: 0,
    });
    try {
      const received: { topic: string; body: any }[] = [];
      app.on('message', (topic, payload) => received.push({ topic, body: JSON.parse(payload.toString()) }));
      await app.subscribeAsync([`device/${kitchen.deviceId}/data/events`, `device/${kitchen.deviceId}/response`], { qos: 1 });
      await app.publishAsync(`device/${kitchen.deviceId}/command/volume/set`, JSON.stringify({ volume: 30 }), { qos: 1 });
      const command = await playerStream.waitFor((e) => e.event === 'player.command');
      expect(command.data.command).toEqual({ command: 'volume', volume: 30 });
      // The player reports through its own instance; the app's instance publishes it.
      expect((await http(servers[1]!.url, 'PUT', `/device-v2/${kitchen.deviceId}/status`, { token: kitchen.token, body: { activeCard: 'abcde', trackKey: '01', playbackStatus: 'playing', userVolumePercentage: 30 } })).status).toBe(200);
      const until = Date.now() + EVENT_CROSSING_MS;
      while (!received.some((m) => m.topic.endsWith('/data/events') && m.body.cardId === 'abcde') && Date.now() < until) await pause(50);
      expect(received.find((m) => m.topic.endsWith('/data/events') && m.body.cardId === 'abcde')?.body).toMatchObject({ trackKey: '01', playbackStatus: 'playing' });
      expect(received.find((m) => m.topic.endsWith('/response'))?.body).toEqual({ status: { volume: 'OK', req_body: '{"volume":30}' } });
    } finally {
      playerStream.close();
      await app.endAsync(true);
    }
  }, 60_000);

  it('30 registrations at once, split over both instances, leave exactly 20 players', async () => {
    const [a, b] = ['auth0|inst-reg-a', 'auth0|inst-reg-b'];
    const admin = await deployment.token('auth0|operator', 'admin');
    const put = await http(servers[0]!.url, 'PUT', '/admin/families/inst-reg-fam', {
      token: admin,
      body: { country: 'US', members: [a, b].map((userId) => ({ userId, approved: true })) },
    });
    expect(put.status).toBe(201);
    const tokens = [await deployment.token(a), await deployment.token(b)];
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) => http(servers[i % 2]!.url, 'POST', '/device-v2/devices/mine', { token: tokens[i % 2], body: { name: `P${i}` } })),
    );
    const outcomes = replies.map((r) => (r.status === 201 ? '201' : `${r.status} ${r.body?.error?.code}`));
    expect(outcomes.filter((o) => o === '201')).toHaveLength(20);
    expect(outcomes.filter((o) => o === '400 device-limit')).toHaveLength(10);
    const listed = await http(servers[1]!.url, 'GET', '/device-v2/devices/mine', { token: tokens[1] });
    expect(listed.body.devices).toHaveLength(20);
  }, 60_000);

  it("delivers each instance's writes to the other's streams, and ends streams on SIGTERM", async () => {
    const [a, b] = ['auth0|inst-a', 'auth0|inst-b'];
    const admin = await deployment.token('auth0|operator', 'admin');
    const put = await http(servers[0]!.url, 'PUT', '/admin/families/inst-fam', {
      token: admin,
      body: { country: 'US', members: [a, b].map((userId) => ({ userId, approved: true })) },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const onB = await openEventStream(servers[1]!.url, await deployment.token(b, 'family:library:view'));
    const onA = await openEventStream(servers[0]!.url, await deployment.token(a, 'family:library:view'));
    expect([onA.status, onB.status]).toEqual([200, 200]);

    // A's write reaches B's stream, and B's write A's.
    const created = await http(servers[0]!.url, 'POST', '/card/family/library/groups', {
      token: await deployment.token(a),
      body: { name: 'From A', imageId: 'i', items: [] },
    });
    expect(created.status).toBe(201);
    const seen = await onB.waitFor((e) => e.event === 'group.created' && e.data.ids.groupId === created.body.id, 10_000);
    const read = await http(servers[1]!.url, 'GET', `/card/family/library/groups/${created.body.id}`, { token: await deployment.token(b) });
    expect(seen.data.tag).toBe(read.headers.etag);
    const fromB = await http(servers[1]!.url, 'POST', '/card/family/library/groups', {
      token: await deployment.token(b),
      body: { name: 'From B', imageId: 'i', items: [] },
    });
    expect(fromB.status).toBe(201);
    await onA.waitFor((e) => e.event === 'group.created' && e.data.ids.groupId === fromB.body.id, 10_000);

    // SIGTERM: B's stream ends with a note, and B exits 0; A's stream goes on.
    const exit = await servers[1]!.stop('SIGTERM', 15_000);
    await onB.ended;
    expect(onB.comments).toContain('server shutting down; reconnect');
    expect(exit.code).toBe(0);
    expect(onA.isEnded()).toBe(false);
    onA.close();
  }, 60_000);
});
