import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailable, UnstorableText } from '../db/errors.js';
import { AppError, badRequest, codeForStatus, type ErrorCode } from '../shared/errors.js';
import { RepeatFilter } from '../shared/repeat-filter.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The code a body over the route's limit answers with, instead of 413 payload-too-large. */
    oversizeCode?: ErrorCode;
  }
}

const send = (reply: FastifyReply, status: number, code: string, message: string): FastifyReply =>
  reply.code(status).type('application/json; charset=utf-8').send({ error: { code, message } });

/** How long one kind of database failure is logged once, with a count of the repeats after. */
const DATABASE_LOG_WINDOW_MS = 10_000;

type ErrorHandler = (error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/**
 * Every error answered in the documented shape: the error handler for what the routes and
 * hooks raise, and the protocol errors Node would answer by itself.
 */
export function registerErrorAnswers(app: FastifyInstance): void {
  app.setErrorHandler(createErrorHandler());
  answerProtocolErrors(app);
}

/**
 * The one error handler. Our own errors carry their code; the database layer's and library
 * errors (validation, body parsing, rate limiting) become the documented shape here. A 5xx
 * never shows its internals: the log has them, with the request id.
 */
function createErrorHandler(): ErrorHandler {
  // A database outage fails every request alike: one line says what failed, not one per request.
  const databaseFailures = new RepeatFilter(DATABASE_LOG_WINDOW_MS);

  return (error, request, reply) => {
    if (error instanceof DatabaseUnavailable) {
      const repeats = databaseFailures.admit(`${error.reason} ${error.detail}`);
      if (repeats !== undefined) {
        request.log.warn({ reason: error.reason, cause: error.detail, repeatsSinceLastLine: repeats }, 'database unavailable');
      }
      reply.header('retry-after', String(error.retryAfterSeconds));
      return send(reply, 503, 'unavailable', `${error.message}; try again later`);
    }
    if (error instanceof UnstorableText) return send(reply, 400, 'bad-request', error.message);
    return answerError(error, request, reply);
  };
}

function answerError(error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof AppError) {
    reply.headers(error.headers);
    return send(reply, error.statusCode, error.code, error.message);
  }
  if (error.validation) {
    return send(reply, 400, 'bad-request', `invalid request: ${error.message}`);
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    // Fastify closes the connection here, while the client may still be sending the body: reset
    // in mid-write, the client often never reads this answer. Kept open, Node reads the rest of
    // the body and throws it away (within the server's requestTimeout), and the answer arrives.
    reply.removeHeader('connection');
    const code = request.routeOptions.config?.oversizeCode;
    if (code) return send(reply, 400, code, `request body is larger than this operation accepts`);
    return send(reply, 413, 'payload-too-large', 'request body is too large');
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    const type = request.headers['content-type'] ?? '';
    return send(reply, 415, 'unsupported-media-type', `content type '${type}' is not accepted: send application/json`);
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return send(reply, status, codeForStatus(status), error.message || 'bad request');
  }
  request.log.error({ err: error }, 'request failed');
  return send(reply, 500, 'internal', `internal error (request ${request.id})`);
}

interface KnownRoute {
  pattern: RegExp;
  method: string;
}

/**
 * A not-found handler that knows the routes: a path that exists under other methods answers
 * 405 with `Allow`, anything else 404. Routes are collected as they are added, so call this
 * before registering them.
 */
export function methodAwareNotFound(app: FastifyInstance): (req: FastifyRequest, reply: FastifyReply) => FastifyReply {
  const routes: KnownRoute[] = [];
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return;
    const source = route.url
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const pattern = new RegExp(`^${source}/?$`);
    for (const method of [route.method].flat()) routes.push({ pattern, method });
  });

  return (request, reply) => {
    const path = (request.raw.url ?? '/').split('?')[0] ?? '/';
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      reply.header('allow', allowed.sort().join(', '));
      return send(reply, 405, 'method-not-allowed', `${request.method} is not allowed here; use ${allowed.join(', ')}`);
    }
    return send(reply, 404, 'not-found', `no route for ${request.method} ${path}`);
  };
}

/**
 * Answers what Node's HTTP parser refuses before a request exists (a malformed header line or
 * Content-Length, headers over the size limit, a request too slow to arrive) in the documented
 * error shape; Fastify's default answers `{"error": "Bad Request", "statusCode": 400, ...}`.
 */
export function clientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'the request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request took too long to arrive']
        : [400, 'the request is not well-formed HTTP'];
  // As Node's own handler: no answer on a socket whose response has already begun.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) socket.write(rawErrorResponse(status, message));
  socket.destroy(error);
}

/** The error shape for a bare status, with the code that status carries. */
const errorJson = (status: number, message: string): string =>
  JSON.stringify({ error: { code: codeForStatus(status), message } });

/** A whole HTTP/1.1 error response, written straight on a socket that has no Fastify reply. */
function rawErrorResponse(status: number, message: string, headers: Record<string, string> = {}): string {
  const body = errorJson(status, message);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * Gives the error shape to the requests Node would answer by itself: CONNECT (dropped without a
 * word), an `Expect` other than 100-continue (an empty 417), and an HTTP/1.1 request without Host
 * (an empty 400, so `http.requireHostHeader` is off and the check is made here).
 */
function answerProtocolErrors(app: FastifyInstance): void {
  app.server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    socket.on('error', () => {});
    const allow = { allow: 'DELETE, GET, HEAD, OPTIONS, POST, PUT' };
    socket.end(rawErrorResponse(405, 'CONNECT is not allowed: this server is no proxy', allow), () => socket.destroy());
  });
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const body = errorJson(417, `the expectation '${req.headers.expect}' cannot be met; only 100-continue can`);
    res.writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
  });
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.raw.httpVersion !== '1.1' || request.headers.host !== undefined) return done();
    done(badRequest('an HTTP/1.1 request needs a Host header') as unknown as FastifyError);
  });
}
