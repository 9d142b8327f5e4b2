import { randomUUID } from 'node:crypto';
import type { AuthConfig } from './config.js';
import { loadOrCreateSigningKey, mintToken } from './local-issuer.js';
import type { Principal } from './principal.js';
import { SCOPES } from './scopes.js';

/**
 * A registered player's credential: a token of the local issuer whose `sub` is the member who
 * registered it (so it reads what that member's family may play), whose scopes are only what a
 * player needs, and which names its device in this claim. Its `jti` is stored with the device;
 * the auth plugin accepts the token only while they match (checked on every request), so
 * removing the player revokes it at once, on every instance.
 */
export const PLAYER_CLAIM = 'cardshelf_player';

/** Read the family's cards, library and groups; report status and receive commands. */
export const PLAYER_SCOPE = `${SCOPES.libraryView} ${SCOPES.player}`;

/** A player lives in a browser left on for months; removing it revokes the token whatever its age. */
export const PLAYER_TOKEN_LIFETIME_DAYS = 365;

export interface IssuedCredential {
  accessToken: string;
  credentialId: string;
  expiresAt: string;
  scope: string;
}

/** Issues player credentials; null when tokens come from an external issuer (no local key to sign with). */
export type PlayerCredentialIssuer = ((deviceId: string, userId: string) => Promise<IssuedCredential>) | null;

export function createPlayerCredentialIssuer(auth: AuthConfig): PlayerCredentialIssuer {
  if (auth.mode !== 'local') return null;
  return async (deviceId, userId) => {
    const key = await loadOrCreateSigningKey(auth.keyFile);
    const credentialId = randomUUID();
    const expiresIn = `${PLAYER_TOKEN_LIFETIME_DAYS}d`;
    const accessToken = await mintToken(key, {
      sub: userId,
      scope: PLAYER_SCOPE,
      expiresIn,
      issuer: auth.issuer,
      audience: auth.audience,
      jti: credentialId,
      claims: { [PLAYER_CLAIM]: deviceId },
    });
    const expiresAt = new Date(Date.now() + PLAYER_TOKEN_LIFETIME_DAYS * 86_400_000).toISOString();
    return { accessToken, credentialId, expiresAt, scope: PLAYER_SCOPE };
  };
}

/** The player a token's claims name, if it is a player's credential. */
export function playerOf(claims: { readonly [claim: string]: unknown }): Principal['player'] {
  const deviceId = claims[PLAYER_CLAIM];
  const credentialId = claims.jti;
  if (typeof deviceId !== 'string' || deviceId === '' || typeof credentialId !== 'string' || credentialId === '') return undefined;
  return { deviceId, credentialId };
}
