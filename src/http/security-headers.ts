import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/**
 * Security headers on every answer. Helmet's default policy suits the API's JSON and the /docs
 * page alike (Swagger UI loads its scripts and styles from this origin, and inline styles are
 * allowed), except `upgrade-insecure-requests`: behind plain HTTP (a local try-out, a proxy
 * terminating TLS elsewhere) it would send the page's own requests to an https:// that is not there.
 */
export async function registerSecurityHeaders(app: FastifyInstance): Promise<void> {
  await app.register(helmet, {
    contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
  });
}
