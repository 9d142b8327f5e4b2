import { decodeJwt } from 'jose';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { announceRevocations, GRANT_CLAIM, recordRevocationsNow, tokenRevocation } from '../auth/revocations.js';
import { TokenRejected, type TokenVerifier } from '../auth/verifier.js';
import type { Store } from '../db/dialect.js';

/**
 * Revoking the engine's access tokens (issue 33, row 4). They are JWTs the API checks without the
 * database, so what ends one before its `exp` is the revocation list (src/auth/revocations.ts):
 * each carries its grant's id, so that revoking the grant (src/oauth/adapter.ts) revokes it.
 */

/** Names the grant in each access token (formats.customizers.jwt). */
export function grantInAccessToken(_ctx: unknown, token: object, jwt: { payload: Record<string, unknown> }): void {
  // Client credentials have no grant (and Cardshelf offers none).
  const grantId = 'grantId' in token ? token.grantId : undefined;
  if (typeof grantId === 'string') jwt.payload[GRANT_CLAIM] = grantId;
}

/**
 * RFC 7009 for access tokens: the engine answers 400 `unsupported_token_type` for any JWT at its
 * revocation endpoint (it cannot revoke what it does not store). This koa middleware, around the
 * engine, takes such an answer after the engine authenticated the client: an access token of this
 * instance issued to that client is put on the revocation list until its `exp`, and the answer is
 * 200, as it is for a token that is not valid or not the client's (RFC 7009 section 2.2: the
 * client cannot act on the difference).
 */
export function accessTokenRevocation(store: Store, verifier: TokenVerifier, route: string) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    await next();
    if (ctx.method !== 'POST' || ctx.path !== route || ctx.status !== 400) return;
    const body = ctx.body as { error?: unknown } | undefined;
    const token = ctx.oidc?.params?.token;
    const clientId = ctx.oidc?.client?.clientId;
    if (body?.error !== 'unsupported_token_type' || typeof token !== 'string' || clientId === undefined) return;
    try {
      const principal = await verifier.verify(token);
      const { tokenId, expiresAt } = principal;
      if (decodeJwt(token).client_id === clientId && tokenId !== undefined && expiresAt !== undefined) {
        const row = tokenRevocation(tokenId, expiresAt);
        await recordRevocationsNow(store, [row]);
        announceRevocations(store, [row]);
      }
    } catch (err) {
      if (!(err instanceof TokenRejected)) throw err;
    }
    ctx.status = 200;
    ctx.body = '';
  };
}
