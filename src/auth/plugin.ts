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
    /**
     * Whether a registered player's credential may call a route open to any valid token
     * (`auth: null`). Routes that name a scope need no flag: a player holds only its own scopes.
     */
    players?: boolean;
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
export interface AuthPluginOptions {
  verifier: TokenVerifier;
  /**
   * Whether a player's credential still stands (its device registered with it, its member in the
   * device's family). Asked on every request a player makes, never cached: removal revokes at once.
   */
  playerCredentialStands: (player: NonNullable<Principal['player']>, userId: string) => Promise<boolean>;
}

async function authPlugin(app: FastifyInstance, opts: AuthPluginOptions): Promise<void> {
  const { verifier, playerCredentialStands } = opts;
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
    const { player, userId } = request.principal;
    if (player) {
      if (!(await playerCredentialStands(player, userId))) throw unauthorized('this player has been removed from its family; register it again');
      if (required === null && request.routeOptions.config.players !== true) {
        throw new AppError('forbidden', "a player's credential cannot be used for this operation");
      }
    }
    if (!grants(request.principal.scopes, required)) {
      throw new AppError('forbidden', `this operation needs the scope '${required}'`, {
        'www-authenticate': `Bearer realm="cardshelf", error="insufficient_scope", scope="${required}"`,
      });
    }
  });
}

export default fp(authPlugin, { name: 'auth' });
