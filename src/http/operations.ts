import { Type } from '@sinclair/typebox';
import type { TokenVerifier } from '../auth/verifier.js';
import type { Store } from '../db/dialect.js';
import { READINESS_REUSE_MS, sharedReadinessCheck } from '../db/readiness.js';
import { ErrorRef, StatusOk } from '../shared/schemas.js';
import { admitUnderPressure } from './load-shedding.js';
import type { App } from './route-app.js';

/** The local issuer's public keys (RFC 7517); the key members are the JWK's own. */
const Jwks = Type.Object({ keys: Type.Array(Type.Object({ kid: Type.String(), kty: Type.String() }, { additionalProperties: true })) });

/**
 * The routes for operators and their tools rather than for clients of the API: the OpenAPI
 * document, liveness, readiness and the local issuer's keys. (`/metrics` is registered with the
 * metrics, http/metrics.ts.)
 */
export function registerOperationRoutes(
  app: App,
  deps: { store: Store; verifier: TokenVerifier; readyTimeoutMs: number },
): void {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get(
    '/healthz',
    // Liveness: an overloaded process is alive, and restarting it would only lose its work.
    {
      schema: { tags: ['operations'], summary: 'The process is up', response: { 200: StatusOk } },
      config: { pressureHandler: admitUnderPressure },
    },
    async () => ({ status: 'ok' as const }),
  );
  const readinessCheck = sharedReadinessCheck(deps.store, deps.readyTimeoutMs);
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'The database answers and accepts writes',
        description: `503 \`unavailable\` (with \`Retry-After\`) when the database does not answer within ${deps.readyTimeoutMs} ms, refuses writes, or its file is no longer where it was opened. One probe write at a time, and a success answers for ${READINESS_REUSE_MS / 1000} s.`,
        response: { 200: StatusOk, 503: ErrorRef },
      },
    },
    async () => {
      const readiness = await readinessCheck();
      if (!readiness.ready) throw readiness.failure;
      return { status: 'ok' as const };
    },
  );
  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['operations'],
        summary: "The local token issuer's public keys",
        description: 'A JSON Web Key Set; 404 when tokens come from an external issuer (its own keys are at its JWKS URL).',
        response: { 200: Jwks, 404: ErrorRef },
      },
    },
    async (_req, reply) =>
      deps.verifier.jwks ??
      reply.code(404).send({ error: { code: 'not-found', message: 'tokens are issued by an external issuer' } }),
  );
}
