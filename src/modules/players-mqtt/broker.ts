import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { Aedes, type AuthErrorCode, type AuthenticateError, type Client } from 'aedes';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { WebSocketServer, createWebSocketStream } from 'ws';
import type { PrincipalStands } from '../../auth/principal-stands.js';
import { SCOPES, grants } from '../../auth/scopes.js';
import { TokenRejected, type TokenVerifier } from '../../auth/verifier.js';
import type { MqttConfig } from '../../config.js';
import type { DeviceService } from '../devices/service.js';
import type { EventHub } from '../events/hub.js';
import type { FamilyService } from '../families/service.js';
import { createBridge } from './bridge.js';
import { INBOX, deviceOfUsername, maySubscribe, publicationOf, type Grant } from './topics.js';

/**
 * The players' MQTT interface (issue 36): an Aedes broker (MQTT 3.1 and 3.1.1; Aedes has no MQTT
 * 5) reached over WebSocket at `/mqtt` on the server's own port, as the public broker is. The
 * password is an access token, checked as every bearer token is; the user name names one of the
 * family's players (or `_`, all of them). What a client may subscribe and publish to is in
 * topics.ts; what the service does with a publish, and what it publishes, in bridge.ts.
 */

export const MQTT_PATH = '/mqtt';

/**
 * The WebSocket subprotocols of MQTT (3.1.1 and 5: `mqtt`; 3.1: `mqttv3.1`). An upgrade to `/`
 * that asks for one is taken too: the public broker takes MQTT at its root as well, and
 * yoto-nodejs-client's default broker URL (`wss://<host>`, no path) connects there.
 */
const MQTT_SUBPROTOCOLS = new Set(['mqtt', 'mqttv3.1']);

function isMqttUpgrade(request: IncomingMessage): boolean {
  const path = (request.url ?? '').split('?')[0];
  if (path === MQTT_PATH) return true;
  const asked = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  return path === '/' && asked.some((p) => MQTT_SUBPROTOCOLS.has(p));
}

/** CONNACK return codes of MQTT 3.1.1 (there is none for "too many connections": 3 is the nearest). */
const CONNACK: Record<'serverUnavailable' | 'badCredentials' | 'notAuthorized', AuthErrorCode> = { serverUnavailable: 3, badCredentials: 4, notAuthorized: 5 };

export interface PlayersMqttDeps {
  verifier: TokenVerifier;
  principalStands: PrincipalStands;
  devices: DeviceService;
  families: FamilyService;
  hub: EventHub;
  config: MqttConfig;
  /** How often each connection's token and rights are checked again (the event streams' heartbeat). */
  recheckMs: number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export interface PlayersMqtt {
  /** Takes a WebSocket upgrade to `/mqtt` (or to `/` with an MQTT subprotocol); false for any other (the caller answers it). */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Open MQTT connections on this instance. */
  connections(): number;
  close(): Promise<void>;
}

/** One authenticated connection: its rights, what it subscribed to, when its token ends. */
interface Connection {
  grant: Grant;
  owner: string;
  topics: Set<string>;
  expiry: NodeJS.Timeout | undefined;
}

function refusal(code: AuthErrorCode, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode: code });
}

export async function createPlayersMqtt(deps: PlayersMqttDeps): Promise<PlayersMqtt> {
  const { verifier, principalStands, devices, families, config, log } = deps;
  const connections = new Map<Client, Connection>();
  const perOwner = new Map<string, number>();
  let closing = false;
  const publishes = new RateLimiterMemory({ points: config.publishesPerSecond, duration: 1 });

  const broker = await Aedes.createBroker({
    // A client id is what the client chose; the public clients' are up to ~60 characters.
    maxClientsIdLength: 128,
    maxTopicLevels: 8,
    // A WebSocket that never sends its CONNECT is closed after this long (Aedes' default is 30 s).
    connectTimeout: 10_000,
  });
  const bridge = createBridge(broker, { devices, hub: deps.hub, log, closeWhere: closeWhere });

  /** Closes the connections whose rights `shutOut` says are gone (a removed player, a disabled account). */
  function closeWhere(shutOut: (grant: Grant) => boolean, why: string): void {
    for (const [client, connection] of connections) {
      if (shutOut(connection.grant)) {
        log.info({ clientId: client.id, why }, 'mqtt: connection closed');
        client.close();
      }
    }
  }

  async function authenticate(client: Client, username: string | undefined, password: Buffer | undefined): Promise<void> {
    if (!password || password.length === 0) throw refusal(CONNACK.badCredentials, 'the password must be an access token');
    let principal;
    try {
      principal = await verifier.verify(password.toString('utf8'));
    } catch (err) {
      if (err instanceof TokenRejected) throw refusal(CONNACK.badCredentials, err.message);
      throw refusal(CONNACK.serverUnavailable, "the token issuer's keys cannot be fetched");
    }
    if (!grants(principal.scopes, SCOPES.libraryView) || !(await principalStands(principal))) {
      throw refusal(CONNACK.notAuthorized, 'this token may not read the family\'s players');
    }
    const familyId = await families.findFamilyId(principal.userId);
    if (familyId === undefined) throw refusal(CONNACK.notAuthorized, 'the token\'s user has no family');
    const named = deviceOfUsername(username);
    const own = principal.player?.deviceId;
    if (named !== undefined && own !== undefined && named !== own) throw refusal(CONNACK.notAuthorized, 'a player connects as itself alone');
    const familyDevices = await bridge.join(familyId, principal.userId);
    if (named !== undefined && !familyDevices.has(named)) {
      bridge.leave(familyId);
      throw refusal(CONNACK.notAuthorized, `'${named}' is no player of this family`);
    }
    const owner = own === undefined ? principal.userId : `player:${own}`;
    const held = perOwner.get(owner) ?? 0;
    if (held >= config.maxConnectionsPerUser) {
      bridge.leave(familyId);
      throw refusal(CONNACK.serverUnavailable, `at most ${config.maxConnectionsPerUser} MQTT connections per user or player`);
    }
    perOwner.set(owner, held + 1);
    try {
      // A player is online while its MQTT connection is open (DECISIONS.md), as while its event stream is.
      if (principal.player) await devices.presence(principal, true);
    } catch (err) {
      release(owner);
      bridge.leave(familyId);
      throw err;
    }
    const connection: Connection = { grant: { principal, familyId }, owner, topics: new Set(), expiry: undefined };
    if (principal.expiresAt !== undefined) {
      // The token's end is the connection's: a client reconnects with a fresh one.
      connection.expiry = setTimeout(() => client.close(), Math.min(2 ** 31 - 1, Math.max(0, principal.expiresAt - Date.now())));
      connection.expiry.unref();
    }
    connections.set(client, connection);
  }

  function release(owner: string): void {
    const left = (perOwner.get(owner) ?? 1) - 1;
    if (left > 0) perOwner.set(owner, left);
    else perOwner.delete(owner);
  }

  broker.authenticate = (client, username, password, done) => {
    authenticate(client, username, password).then(
      () => done(null, true),
      (err: AuthenticateError) => {
        log.info({ clientId: client.id, reason: err.message }, 'mqtt: connection refused');
        done(err.returnCode ? err : refusal(CONNACK.serverUnavailable, 'the connection could not be checked'), false);
      },
    );
  };

  broker.on('clientDisconnect', (client) => forget(client));
  broker.on('clientError', (client, err) => {
    log.info({ clientId: client.id, reason: err.message }, 'mqtt: client error');
  });

  function forget(client: Client): void {
    const connection = connections.get(client);
    if (!connection) return;
    connections.delete(client);
    clearTimeout(connection.expiry);
    release(connection.owner);
    bridge.leave(connection.grant.familyId);
    const player = connection.grant.principal.player;
    if (player && (perOwner.get(connection.owner) ?? 0) === 0 && deps.hub.playerStreams(player.deviceId) === 0 && !closing) {
      devices.presence(connection.grant.principal, false).catch((err: unknown) => log.warn({ err }, 'mqtt: marking a player offline failed'));
    }
  }

  // A refused topic is SUBACK 0x80 for that topic alone; the others are granted.
  broker.authorizeSubscribe = (client, subscription, done) => {
    const connection = connections.get(client);
    const { topic } = subscription;
    if (!connection || !maySubscribe(connection.grant, topic, (id) => bridge.isFamilyDevice(connection.grant.familyId, id))) {
      done(null, null);
      return;
    }
    if (!connection.topics.has(topic) && connection.topics.size >= config.maxSubscriptions) {
      done(null, null);
      return;
    }
    connection.topics.add(topic);
    done(null, subscription);
  };
  broker.on('unsubscribe', (topics, client) => {
    const connection = connections.get(client);
    for (const topic of topics) connection?.topics.delete(topic);
  });

  // A publish is for the service: it goes to the inbox (topics.ts); a forbidden one, one too
  // large or one too many in a second disconnects the client (MQTT 3.1.1 has no refusal of a PUBLISH).
  broker.authorizePublish = (client, packet, done) => {
    if (!client) {
      done(null);
      return;
    }
    const connection = connections.get(client);
    if (!connection) {
      done(new Error('not connected'));
      return;
    }
    if (packet.payload.length > config.maxMessageBytes) {
      done(new Error(`a message is at most ${config.maxMessageBytes} bytes`));
      return;
    }
    const publication = publicationOf(connection.grant, packet.topic, (id) => bridge.isFamilyDevice(connection.grant.familyId, id));
    if ('refused' in publication) {
      done(new Error(publication.refused));
      return;
    }
    publishes.consume(client.id).then(
      () => {
        packet.topic = `${INBOX}${packet.topic}`;
        packet.retain = false;
        done(null);
      },
      () => done(new Error(`at most ${config.publishesPerSecond} publishes a second`)),
    );
  };

  broker.on('publish', (packet, client) => {
    if (!client || !packet.topic.startsWith(INBOX)) return;
    const connection = connections.get(client);
    if (!connection) return;
    bridge.fromClient(connection.grant, packet.topic.slice(INBOX.length), Buffer.from(packet.payload));
  });

  // Rights taken away without an event (a row changed by hand, a revocation list entry) end a
  // connection within this period, as they end an event stream within a heartbeat.
  const recheck = setInterval(() => {
    for (const [client, connection] of connections) {
      const { principal } = connection.grant;
      principalStands(principal).then(
        async (stands) => {
          if (!stands) client.close();
          // Still there: a player's presence outlasts the reports' 30-second window while it stays connected.
          else if (principal.player) await devices.presence(principal, true);
        },
        (err: unknown) => log.warn({ err }, 'mqtt: checking a connection\'s token failed'),
      );
    }
  }, deps.recheckMs);
  recheck.unref();

  const sockets = new WebSocketServer({ noServer: true, maxPayload: config.maxMessageBytes + 1024 });

  return {
    handleUpgrade(request, socket, head) {
      if (!isMqttUpgrade(request)) return false;
      sockets.handleUpgrade(request, socket, head, (ws) => {
        const stream = createWebSocketStream(ws);
        stream.on('error', () => ws.terminate());
        broker.handle(stream, request);
      });
      return true;
    },
    connections: () => connections.size,
    async close() {
      closing = true;
      clearInterval(recheck);
      await bridge.close();
      for (const client of connections.keys()) client.close();
      sockets.close();
      await new Promise<void>((resolve) => broker.close(() => resolve()));
    },
  };
}
