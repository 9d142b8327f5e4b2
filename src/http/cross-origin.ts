import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/** CORS for browser clients of the API, from `CORS_ORIGIN` (`*`, or the origins allowed). */
export async function registerCors(app: FastifyInstance, corsOrigin: string[] | '*'): Promise<void> {
  await app.register(cors, {
    origin: corsOrigin === '*' ? '*' : corsOrigin,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    // Request headers (If-None-Match, If-Match, Idempotency-Key, ...) are allowed as the preflight
    // asks for them; these answer headers are shown to scripts besides the CORS-safelisted ones.
    exposedHeaders: ['ETag', 'Idempotent-Replayed', 'Retry-After', 'x-request-id'],
    // A bare OPTIONS (no Origin or no Access-Control-Request-Method) would otherwise get a
    // text/plain 400, outside the error shape; it is answered like a preflight instead.
    strictPreflight: false,
  });
}
