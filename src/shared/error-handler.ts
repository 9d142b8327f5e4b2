import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, codeForStatus, type ErrorCode } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The code a body over the route's limit answers with, instead of 413 payload-too-large. */
    oversizeCode?: ErrorCode;
  }
}

const send = (reply: FastifyReply, status: number, code: string, message: string): FastifyReply =>
  reply.code(status).type('application/json; charset=utf-8').send({ error: { code, message } });

/**
 * The one error handler. Our own errors carry their code; library errors (validation, body
 * parsing, rate limiting) become the documented shape here. A 5xx never shows its internals:
 * the log has them, with the request id.
 */
export function errorHandler(error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof AppError) {
    reply.headers(error.headers);
    return send(reply, error.statusCode, error.code, error.message);
  }
  if (error.validation) {
    return send(reply, 400, 'bad-request', `invalid request: ${error.message}`);
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
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
