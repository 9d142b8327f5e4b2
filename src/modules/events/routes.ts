import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../auth/principal.js';
import type { PrincipalStands } from '../../auth/principal-stands.js';
import { SCOPES } from '../../auth/scopes.js';
import type { App } from '../../http/route-app.js';
import { AppError, badRequest } from '../../shared/errors.js';
import { ErrorRef, authErrors } from '../../shared/schemas.js';
import type { FamilyService } from '../families/service.js';
import type { EventHub } from './hub.js';

/** An event id: the log's ids are positive integers. */
const EVENT_ID = /^\d{1,15}$/;

const EventsQuery = Type.Object(
  {
    lastEventId: Type.Optional(
      Type.String({
        pattern: EVENT_ID.source,
        description: 'The id of the last event received, as `Last-Event-ID` (for clients that cannot send that header); the header wins.',
      }),
    ),
  },
  { additionalProperties: false },
);

const STREAM_DESCRIPTION = [
  'Server-Sent Events, one per change the caller may see:',
  '`id: <n>`, `event: <kind>` and `data: {"kind", "ids", "read", "tag", ...}` (docs/api.md, "Live events"):',
  'each `data` is a [`LiveEvent`](#/components/schemas/LiveEvent), one schema per kind.',
  'Comment lines (`:`) are heartbeats. A `reset` event means the events since `Last-Event-ID` are no longer kept: refetch everything.',
].join(' ');

/** The id a client resumes from: `Last-Event-ID`, else `?lastEventId=`; 400 when it is no id of ours. */
function lastEventIdOf(request: FastifyRequest, query: { lastEventId?: string }): number | undefined {
  const header = request.headers['last-event-id'];
  const given = typeof header === 'string' && header.trim() !== '' ? header.trim() : query.lastEventId;
  if (given === undefined) return undefined;
  if (!EVENT_ID.test(given)) throw badRequest('Last-Event-ID must be the id of an event of this stream (digits)');
  return Number(given);
}

export async function eventRoutes(
  app: App,
  opts: {
    hub: EventHub;
    families: FamilyService;
    principalStands: PrincipalStands;
    /** A player's last stream on this instance closed (not by the server shutting down). */
    playerLeft: (principal: Principal) => Promise<void>;
  },
): Promise<void> {
  const { hub, families, principalStands, playerLeft } = opts;

  app.get('/user/family/events', {
    config: { auth: SCOPES.libraryView },
    schema: {
      tags: ['family'],
      summary: "Live events of the caller's family and of the caller's own things",
      description:
        'A `text/event-stream` that lasts until the client leaves, the server shuts down or the token expires (then reconnect), or until the caller may no longer read it (a removed player, a disabled account, a member who left). Resume with `Last-Event-ID` (or `lastEventId`): a family\'s events replay from the caller\'s joining on. 429 with `Retry-After` when the caller, its family\'s players (for a player) or the server have as many streams open as allowed.',
      querystring: EventsQuery,
      headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ description: 'The id of the last event received' })) }),
      response: {
        200: { description: STREAM_DESCRIPTION, content: { 'text/event-stream': { schema: Type.String() } } },
        ...authErrors,
        400: ErrorRef,
        429: ErrorRef,
      },
    },
    handler: async (request, reply) => {
      const { principal } = request;
      const { userId, expiresAt, player } = principal;
      const lastEventId = lastEventIdOf(request, request.query);
      // Checked once here and at every heartbeat (the hub): a stream outlives many requests.
      if (!(await principalStands(principal))) {
        throw new AppError('unauthorized', 'this token may no longer read events', {
          'www-authenticate': 'Bearer realm="cardshelf", error="invalid_token", error_description="this token may no longer read events"',
        });
      }
      // The family as the library view finds it (a stub on first need).
      const familyId = await families.ensureFamilyId(userId);
      // A registered player sees its family's events (its commands among them), not the own
      // things (wishlists, uploads) of the member it acts through; its streams count as its own
      // and as its family's players'.
      const readerId = player ? `player:${player.deviceId}` : userId;
      const slot = hub.reserve(player ? { reader: readerId, playerFamily: familyId } : { reader: readerId });
      // From here the answer is the raw stream; headers set so far (CORS, request id) go with it.
      reply.hijack();
      const raw = reply.raw;
      const headers: Record<string, string | number | string[]> = {};
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
      raw.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        // Proxies (nginx) must pass events on as they come, not buffer them.
        'x-accel-buffering': 'no',
        // A stream that ends (shutdown, expiry, revocation) ends its connection too: kept alive
        // idle, it would hold a closing server up to keepAliveTimeout (72 s), and a client
        // reconnects on a new one anyway.
        connection: 'close',
      });
      raw.flushHeaders();
      if (player) {
        // After the hub let go of this stream (its own close listener runs first or after).
        raw.once('close', () =>
          setImmediate(() => {
            if (hub.closing() || hub.playerStreams(player.deviceId) > 0) return;
            playerLeft(principal).catch((err: unknown) => request.log.warn({ err }, 'live events: marking a player offline failed'));
          }),
        );
      }
      // A client may leave while the hub reads where its stream starts: the close is noted from
      // now on, so that a listener the hub adds after it runs at once (else the stream would hold
      // its slot until a heartbeat found the socket gone).
      let closed = false;
      raw.once('close', () => (closed = true));
      const sink = {
        write: (chunk: string) => void raw.write(chunk),
        buffered: () => raw.writableLength,
        end: (last: string) => raw.end(last),
        destroy: () => raw.destroy(),
        onClose: (listener: () => void) => (closed ? queueMicrotask(listener) : void raw.once('close', listener)),
        gone: () => closed || raw.destroyed,
      };
      try {
        await hub.start(slot, { reader: { familyId, userId: readerId }, principal, lastEventId, expiresAt }, sink);
      } catch (err) {
        request.log.error({ err }, 'live events: the stream could not start');
        raw.destroy();
      }
    },
  });
}
