import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_USER_SCOPES, cardBody, startTestApp, type TestApp } from '../support/test-app.js';
import { createCard, expectStatus, familyOf, newUser, VIEW } from '../support/fixtures.js';
import { openEventStream, pause, type EventStreamClient } from '../support/event-stream.js';
import { testDialect } from '../support/test-database.js';

/**
 * The players' MQTT interface (issue 36) through a real MQTT client (`mqtt` from npm) over
 * WebSocket at /mqtt: who may connect, subscribe and publish; what a command does; what the
 * apps see of a player's reports; the limits.
 */

const AUTHORIZER = '?x-amz-customauthorizer-name=PublicJWTAuthorizer';
const LIMITS = { MQTT_MAX_CONNECTIONS_PER_USER: '3', MQTT_MAX_SUBSCRIPTIONS: '12', MQTT_MAX_MESSAGE_BYTES: '2048', MQTT_PUBLISHES_PER_SECOND: '10' };

interface Player {
  deviceId: string;
  token: string;
}

interface Received {
  topic: string;
  body: any;
  retain: boolean;
}

describe(`players over MQTT on ${testDialect()}`, () => {
  let t: TestApp;
  let base: string;
  let url: string;
  const clients: MqttClient[] = [];
  const streams: EventStreamClient[] = [];

  beforeAll(async () => {
    t = await startTestApp({ ...LIMITS, EVENTS_HEARTBEAT_SECONDS: '1', LOG_LEVEL: 'silent' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    base = `http://127.0.0.1:${port}`;
    url = `ws://127.0.0.1:${port}/mqtt`;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
    for (const s of streams) s.close();
    await t.close();
  });

  /** A client that never reconnects, so a refusal or a disconnect is seen as it is. */
  async function connect(username: string, password: string, opts: IClientOptions = {}): Promise<MqttClient> {
    const client = await connectAsync(url, { username, password, reconnectPeriod: 0, connectTimeout: 5000, ...opts });
    clients.push(client);
    return client;
  }

  /** The CONNACK return code of a refused connection. */
  async function refusedWith(username: string, password: string): Promise<number | undefined> {
    try {
      await connect(username, password);
      return 0;
    } catch (err) {
      return (err as { code?: number }).code;
    }
  }

  function inbox(client: MqttClient): Received[] {
    const received: Received[] = [];
    client.on('message', (topic, payload, packet) => {
      let body: unknown = null;
      try {
        body = payload.length === 0 ? null : JSON.parse(payload.toString());
      } catch {
        body = payload.toString();
      }
      received.push({ topic, body, retain: packet.retain });
    });
    return received;
  }

  async function waitFor(received: Received[], match: (m: Received) => boolean, what: string, ms = 5000): Promise<Received> {
    const until = Date.now() + ms;
    for (;;) {
      const found = received.find(match);
      if (found) return found;
      if (Date.now() > until) throw new Error(`no ${what} within ${ms} ms; got ${JSON.stringify(received.map((m) => m.topic))}`);
      await pause(25);
    }
  }

  /** The SUBACK's codes, one a topic (mqtt.js rejects a SUBACK with any refusal; its packet has them all). */
  async function granted(client: MqttClient, topics: string[], qos: 0 | 1 = 1): Promise<number[]> {
    try {
      return (await client.subscribeAsync(topics, { qos })).map((g) => g.qos);
    } catch (err) {
      const packet = (err as { packet?: { granted?: number[] } }).packet;
      if (!packet?.granted) throw err;
      return packet.granted;
    }
  }

  const closed = (client: MqttClient): Promise<void> => new Promise((resolve) => (client.disconnected || !client.connected ? resolve() : client.once('close', () => resolve())));

  async function familyWithPlayer(): Promise<{ parent: string; token: string; player: Player }> {
    const parent = newUser('mqtt-parent');
    await familyOf(t, [parent]);
    const token = await t.token(parent, ALL_USER_SCOPES);
    const r = expectStatus(await t.call('POST', '/device-v2/devices/mine', { token, body: { name: 'Kitchen' } }), 201);
    return { parent, token, player: { deviceId: r.body.device.deviceId, token: r.body.credential.accessToken } };
  }

  const report = async (player: Player, body: Record<string, unknown>): Promise<void> => {
    expectStatus(await t.call('PUT', `/device-v2/${player.deviceId}/status`, { token: player.token, body }), 200);
  };

  it('lets a member connect with its token, by its player id or `_`, and refuses what it must (CONNACK codes)', async () => {
    const { parent, token, player } = await familyWithPlayer();
    const other = await familyWithPlayer();
    expect((await connect(`${player.deviceId}${AUTHORIZER}`, token)).connected).toBe(true);
    expect((await connect(`_${AUTHORIZER}`, token)).connected).toBe(true);
    // Another family's player: not authorized. A token refused: bad user name or password.
    expect(await refusedWith(`${other.player.deviceId}${AUTHORIZER}`, token)).toBe(5);
    expect(await refusedWith(`_${AUTHORIZER}`, 'not-a-token')).toBe(4);
    const expiring = await t.token(parent, ALL_USER_SCOPES, '1s');
    await pause(1100);
    expect(await refusedWith(`_${AUTHORIZER}`, expiring)).toBe(4);
    expect(await refusedWith(`_${AUTHORIZER}`, await t.token(parent, 'user:content:view'))).toBe(5);
    // A player's credential connects as itself alone.
    expect(await refusedWith(`${other.player.deviceId}${AUTHORIZER}`, player.token)).toBe(5);
  });

  it('grants subscriptions to the family\'s players alone; a player to its own command topics alone', async () => {
    const { token, player } = await familyWithPlayer();
    const other = await familyWithPlayer();
    const app = await connect(`_${AUTHORIZER}`, token);
    const codes = await granted(app, [
      `device/${player.deviceId}/data/events`,
      `device/${player.deviceId}/#`,
      `device/${other.player.deviceId}/data/events`,
      'device/+/data/status',
      '#',
      '$cardshelf/inbox/#',
    ]);
    expect(codes).toEqual([1, 1, 128, 128, 128, 128]);

    const self = await connect(`${player.deviceId}${AUTHORIZER}`, player.token);
    expect(await granted(self, [`device/${player.deviceId}/command/#`, `device/${player.deviceId}/data/events`, `device/${other.player.deviceId}/command/#`])).toEqual([1, 128, 128]);
  });

  it('disconnects a player that publishes a command, or anything under another player', async () => {
    const { player } = await familyWithPlayer();
    const other = await familyWithPlayer();
    for (const topic of [`device/${other.player.deviceId}/command/card/stop`, `device/${player.deviceId}/command/card/stop`]) {
      const self = await connect(`${player.deviceId}${AUTHORIZER}`, player.token);
      const gone = closed(self);
      self.publish(topic, '{}', { qos: 1 });
      await gone;
      expect(self.connected).toBe(false);
    }
  });

  it('answers status and events requests from the player\'s last report, and status/full with statusVersion 3', async () => {
    const { token, player } = await familyWithPlayer();
    await report(player, { activeCard: 'card1', chapterKey: '01', trackKey: '01-2', position: 12, trackLength: 60, playbackStatus: 'playing', userVolumePercentage: 50 });
    const app = await connect(`${player.deviceId}${AUTHORIZER}`, token);
    const received = inbox(app);
    await app.subscribeAsync(['data/events', 'data/status', 'status/full', 'response'].map((s) => `device/${player.deviceId}/${s}`), { qos: 1 });
    await app.publishAsync(`device/${player.deviceId}/command/status/request`, '', { qos: 1 });
    await app.publishAsync(`device/${player.deviceId}/command/events/request`, '', { qos: 1 });
    await app.publishAsync(`device/${player.deviceId}/command/status`, JSON.stringify({ requestId: 'r1' }), { qos: 1 });
    const status = await waitFor(received, (m) => m.topic.endsWith('/data/status'), 'data/status');
    expect(status.body.status).toMatchObject({ activeCard: 'card1', playingStatus: 1, userVolume: 50, cardInserted: 2 });
    const events = await waitFor(received, (m) => m.topic.endsWith('/data/events'), 'data/events');
    expect(events.body).toMatchObject({ cardId: 'card1', chapterKey: '01', trackKey: '01-2', position: 12, trackLength: 60, playbackStatus: 'playing', volume: 8 });
    const full = await waitFor(received, (m) => m.topic.endsWith('/status/full'), 'status/full');
    expect(full.body).toMatchObject({ status: { statusVersion: 3, activeCard: 'card1' }, requestId: 'r1' });
    expect(typeof full.body.status.battery).toBe('number');
    const responses = received.filter((m) => m.topic.endsWith('/response')).map((m) => m.body.status);
    expect(responses).toEqual(expect.arrayContaining([expect.objectContaining({ status: 'OK' }), expect.objectContaining({ events: 'OK' })]));
  });

  it("carries an app's commands to the player's event stream, and answers each on `response`", async () => {
    const { parent, token, player } = await familyWithPlayer();
    const card = (await createCard(t, parent, cardBody('Bedtime'))).cardId as string;
    const playerStream = await openEventStream(base, player.token);
    streams.push(playerStream);
    await report(player, { playbackStatus: 'stopped' });
    const app = await connect(`${player.deviceId}${AUTHORIZER}`, token);
    const received = inbox(app);
    await app.subscribeAsync(`device/${player.deviceId}/response`, { qos: 1 });

    const commands = [
      ['card/start', { uri: `https://yoto.io/${card}`, chapterKey: '01', trackKey: '01', secondsIn: 5 }, { command: 'card-play', cardId: card, chapterKey: '01', trackKey: '01', secondsIn: 5 }, 'card'],
      ['volume/set', { volume: 40 }, { command: 'volume', volume: 40 }, 'volume'],
      ['card/pause', {}, { command: 'pause' }, 'card'],
      ['card/resume', {}, { command: 'resume' }, 'card'],
      ['card/stop', {}, { command: 'stop' }, 'card'],
    ] as const;
    for (const [topic, payload, command, key] of commands) {
      const at = received.length;
      await app.publishAsync(`device/${player.deviceId}/command/${topic}`, JSON.stringify(payload), { qos: 1 });
      const sent = await playerStream.waitFor((e) => e.event === 'player.command' && JSON.stringify(e.data.command) === JSON.stringify(command));
      expect(sent.data.ids.deviceId).toBe(player.deviceId);
      const answer = await waitFor(received, (m) => received.indexOf(m) >= at, `response to ${topic}`);
      expect(answer.body.status).toMatchObject({ [key]: 'OK', req_body: JSON.stringify(payload) });
    }

    // What a browser cannot do, a card the family may not play, a bad payload: FAIL, with why.
    const refusals = [
      ['reboot', '', 'reboot', 'bad-request'],
      ['ambients/set', JSON.stringify({ r: 1, g: 2, b: 3 }), 'ambients', 'bad-request'],
      ['card/start', JSON.stringify({ uri: 'https://yoto.io/nosuchcard' }), 'card', 'not-found'],
      ['volume/set', JSON.stringify({ volume: 101 }), 'volume', 'bad-request'],
      ['volume/set', 'not json', 'volume', 'bad-request'],
    ] as const;
    for (const [topic, payload, key, code] of refusals) {
      const at = received.length;
      await app.publishAsync(`device/${player.deviceId}/command/${topic}`, payload, { qos: 1 });
      const answer = await waitFor(received, (m) => received.indexOf(m) >= at, `response to ${topic}`);
      expect(answer.body.status).toMatchObject({ [key]: 'FAIL', error: code });
      expect(answer.body.status.message).toEqual(expect.any(String));
    }
  });

  it("publishes a player's reports on its data topics, and its presence (retained) online, then offline when it is removed", async () => {
    const { token, player } = await familyWithPlayer();
    const app = await connect(`${player.deviceId}${AUTHORIZER}`, token);
    const received = inbox(app);
    await app.subscribeAsync(['data/events', 'data/status', 'events', 'status', 'presence'].map((s) => `device/${player.deviceId}/${s}`), { qos: 1 });
    const offline = await waitFor(received, (m) => m.topic.endsWith('/presence'), 'retained presence');
    expect([offline.retain, offline.body.state]).toEqual([true, 'offline']);

    await report(player, { activeCard: 'cardX', trackKey: '02', position: 3, trackLength: 30, playbackStatus: 'playing' });
    const online = await waitFor(received, (m) => m.topic.endsWith('/presence') && m.body?.state === 'online', 'presence online');
    expect(online.body.ts).toEqual(expect.any(Number));
    for (const suffix of ['data/events', 'events']) {
      const e = await waitFor(received, (m) => m.topic.endsWith(`/${suffix}`) && m.body.cardId === 'cardX', suffix);
      expect(e.body).toMatchObject({ trackKey: '02', playbackStatus: 'playing' });
    }
    await waitFor(received, (m) => m.topic.endsWith('/data/status') && m.body.status.activeCard === 'cardX', 'data/status');

    // A second app subscribing now gets the retained presence at once.
    const late = await connect(`_${AUTHORIZER}`, token);
    const lateReceived = inbox(late);
    await late.subscribeAsync(`device/${player.deviceId}/presence`, { qos: 1 });
    expect((await waitFor(lateReceived, () => true, 'retained presence')).body.state).toBe('online');

    // Removed: its own MQTT connection is closed at once.
    const self = await connect(`${player.deviceId}${AUTHORIZER}`, player.token);
    const gone = closed(self);
    expectStatus(await t.call('DELETE', `/device-v2/${player.deviceId}`, { token }), 200);
    await gone;
  });

  it("marks a player offline at once when its last event stream closes (presence, data/status and REST alike)", async () => {
    const { token, player } = await familyWithPlayer();
    const tabs = [await openEventStream(base, player.token), await openEventStream(base, player.token)];
    await report(player, { activeCard: 'cardY', playbackStatus: 'playing' });
    const app = await connect(`${player.deviceId}${AUTHORIZER}`, token);
    const received = inbox(app);
    await app.subscribeAsync([`device/${player.deviceId}/presence`, `device/${player.deviceId}/data/status`], { qos: 1 });
    await waitFor(received, (m) => m.topic.endsWith('/presence') && m.body?.state === 'online', 'presence online');
    // One of two tabs closes: still online.
    tabs[0]!.close();
    await pause(300);
    expect(received.filter((m) => m.topic.endsWith('/presence')).map((m) => m.body.state)).toEqual(['online']);
    tabs[1]!.close();
    const gone = await waitFor(received, (m) => m.topic.endsWith('/presence') && m.body?.state === 'offline', 'presence offline', 3000);
    expect(gone.body.ts).toEqual(expect.any(Number));
    const status = expectStatus(await t.call('GET', `/device-v2/${player.deviceId}/status`, { token }), 200).body;
    expect([status.isOnline, status.activeCard]).toEqual([false, 'cardY']);
    // It comes back with its next report.
    await report(player, { activeCard: 'cardY', playbackStatus: 'paused' });
    await waitFor(received, (m) => received.indexOf(m) > received.indexOf(gone) && m.body?.state === 'online', 'presence online again');
  });

  it('a player is online while its own MQTT connection is open, and offline when it closes', async () => {
    const { token, player } = await familyWithPlayer();
    const app = await connect(`${player.deviceId}${AUTHORIZER}`, token);
    const received = inbox(app);
    await app.subscribeAsync(`device/${player.deviceId}/presence`, { qos: 1 });
    await waitFor(received, (m) => m.body?.state === 'offline', 'presence offline');
    const self = await connect(`${player.deviceId}${AUTHORIZER}`, player.token);
    await waitFor(received, (m) => m.body?.state === 'online', 'presence online');
    expect(expectStatus(await t.call('GET', `/device-v2/${player.deviceId}/status`, { token }), 200).body.isOnline).toBe(true);
    const at = received.length;
    await self.endAsync();
    await waitFor(received, (m) => received.indexOf(m) >= at && m.body?.state === 'offline', 'presence offline again');
    expect(expectStatus(await t.call('GET', `/device-v2/${player.deviceId}/status`, { token }), 200).body.isOnline).toBe(false);
  });

  it('closes a connection when its token expires, and a fresh token reconnects', async () => {
    const { parent } = await familyWithPlayer();
    const app = await connect(`_${AUTHORIZER}`, await t.token(parent, VIEW, '2s'));
    const started = Date.now();
    await closed(app);
    expect(Date.now() - started).toBeLessThan(4000);
    expect((await connect(`_${AUTHORIZER}`, await t.token(parent, VIEW))).connected).toBe(true);
  });

  it('holds its limits: connections per user, subscriptions per connection, message size, publish rate', async () => {
    const { parent, token, player } = await familyWithPlayer();
    const held = [await connect(`_${AUTHORIZER}`, token), await connect(`_${AUTHORIZER}`, token), await connect(`_${AUTHORIZER}`, token)];
    expect(await refusedWith(`_${AUTHORIZER}`, token)).toBe(3);
    await held[0]!.endAsync();
    await pause(100);
    const app = await connect(`_${AUTHORIZER}`, token);

    const topics = Array.from({ length: 13 }, (_, i) => `device/${player.deviceId}/data/x${i}`);
    expect((await granted(app, topics, 0)).filter((code) => code === 128)).toHaveLength(1);

    const big = held[1]!;
    const bigGone = closed(big);
    big.publish(`device/${player.deviceId}/command/volume/set`, 'x'.repeat(3000), { qos: 0 });
    await bigGone;

    const chatty = held[2]!;
    const chattyGone = closed(chatty);
    for (let i = 0; i < 30; i++) chatty.publish(`device/${player.deviceId}/command/events/request`, '', { qos: 0 });
    await chattyGone;
    expect([big.connected, chatty.connected]).toEqual([false, false]);
    void parent;
  });

  it('survives garbage on /mqtt: the connection is closed, the server keeps answering', async () => {
    const garbage = [
      Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]),
      Buffer.from('GET / HTTP/1.1\r\n\r\n'),
      Buffer.from([0x10, 0x7f, ...Array.from({ length: 127 }, (_, i) => i)]),
      Buffer.alloc(0),
      Buffer.from([0x30, 0x02, 0x00, 0x00]),
    ];
    for (const bytes of garbage) {
      const ws = new WebSocket(url, 'mqtt');
      await new Promise<void>((resolve, reject) => {
        ws.on('open', () => ws.send(bytes));
        ws.on('close', () => resolve());
        ws.on('error', reject);
        setTimeout(() => ws.terminate(), 3000);
      });
    }
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const { token } = await familyWithPlayer();
    expect((await connect(`_${AUTHORIZER}`, token)).connected).toBe(true);
  });

  it.each([
    ['/not-mqtt', 'mqtt'],
    ['/', undefined],
    ['/', 'chat'],
  ])('answers 404 to a WebSocket upgrade to %s asking for subprotocol %s', async (path, protocol) => {
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${base}${path}`, {
        headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...(protocol ? { 'sec-websocket-protocol': protocol } : {}) },
      });
      req.on('response', (res) => resolve(res.statusCode));
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(404);
  });

  it.each([
    ['3.1.1 (subprotocol mqtt)', { protocolVersion: 4 }],
    ['3.1 (subprotocol mqttv3.1)', { protocolId: 'MQIsdp', protocolVersion: 3 }],
  ] as const)('takes MQTT %s at the root too, as the public broker does (yoto-nodejs-client connects to `wss://<host>`, no path)', async (_version, protocol) => {
    const { token, player } = await familyWithPlayer();
    const root = url.replace(/\/mqtt$/, '');
    const client = await connectAsync(root, { username: `${player.deviceId}${AUTHORIZER}`, password: token, reconnectPeriod: 0, connectTimeout: 5000, ...protocol });
    clients.push(client);
    expect(client.connected).toBe(true);
    expect(await granted(client, [`device/${player.deviceId}/data/events`])).toEqual([1]);
  });
});
