import type { FastifyInstance } from 'fastify';
import { loggedUrl } from './logged-url.js';
import { echoRequestId } from './request-id.js';

/**
 * Every answer carries its request's id, and each request is logged once, when it is answered
 * (Fastify's own two lines a request are turned off in the app's options). At `debug` or
 * `trace`, a line when a request starts too, for tracing one that hangs: the hook is only
 * registered then, so other levels pay nothing for it.
 */
export function registerRequestLog(app: FastifyInstance, logLevel: string): void {
  echoRequestId(app);
  if (logLevel === 'debug' || logLevel === 'trace') {
    app.addHook('onRequest', async (request) => {
      request.log.debug({ method: request.method, url: loggedUrl(request.url) }, 'request received');
    });
  }
  // `done`, not async: see echoRequestId.
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      { method: request.method, url: loggedUrl(request.url), statusCode: reply.statusCode, responseTime: reply.elapsedTime },
      'request completed',
    );
    done();
  });
}
