import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../shared/errors.js';
import { grants, type Scope } from './scopes.js';
import type { Principal } from './principal.js';
import { TokenRejected, type TokenVerifier } from './verifier.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Who may call the route: a scope, `null` for any valid token. Routes without it are
     * public (health, docs, the JWKS).
     */
    auth?: Scope | null;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

const challenge = (error: string, description: string): Record<string, string> => ({
  'www-authenticate': `Bearer realm="cardshelf", error="${error}", error_description="${description.replace(/"/g, "'")}"`,
});

function unauthorized(message: string): AppError {
  return new AppError('unauthorized', message, challenge('invalid_token', message));
}

/**
 * Bearer authentication for every route that declares `config.auth`. It runs in `onRequest`,
 * before the body is read, so an unauthenticated caller never gets a body parsed.
 */
async function authPlugin(app: FastifyInstance, opts: { verifier: TokenVerifier }): Promise<void> {
  const { verifier } = opts;
  app.decorateRequest('principal', null as unknown as Principal);

  app.addHook('onRequest', async (request: FastifyRequest) => {
    const required = request.routeOptions.config.auth;
    if (required === undefined) return;

    const header = request.headers.authorization;
    if (!header) {
      throw new AppError('unauthorized', 'missing bearer token (Authorization: Bearer <token>)', {
        'www-authenticate': 'Bearer realm="cardshelf"',
      });
    }
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (!match?.[1]) throw unauthorized("Authorization header must be 'Bearer <token>'");

    try {
      request.principal = await verifier.verify(match[1]);
    } catch (err) {
      if (err instanceof TokenRejected) throw unauthorized(err.message);
      // Anything else is the issuer's keys out of reach (the token itself was well-formed):
      // not the caller's fault, and a retry may succeed.
      request.log.error({ err }, 'token keys unavailable');
      throw new AppError('unavailable', "the token issuer's keys cannot be fetched; try again", { 'retry-after': '5' });
    }
    if (!grants(request.principal.scopes, required)) {
      throw new AppError('forbidden', `this operation needs the scope '${required}'`, {
        'www-authenticate': `Bearer realm="cardshelf", error="insufficient_scope", scope="${required}"`,
      });
    }
  });
}

export default fp(authPlugin, { name: 'auth' });
