import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A client's (or a proxy's) id is kept when it is a plain token: up to 128 characters of
 * letters, digits and `-_.:`, which covers UUIDs, ULIDs and the common tracing formats without
 * letting a header smuggle anything into the logs.
 */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's `genReqId`: the caller's well-formed `x-request-id`, else a new UUID. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && WELL_FORMED.test(given) ? given : randomUUID();
}

/** Every answer carries its request's id, as every log line about it does (`reqId`). */
export function echoRequestId(app: FastifyInstance): void {
  // Hooks on every request take `done`, not a promise: an async hook costs a promise and a turn
  // of the microtask queue on each request, for work that never waits.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
