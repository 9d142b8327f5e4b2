import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
} from 'jose';
import type { AuthConfig } from './config.js';
import { hasLoneSurrogate } from '../shared/text.js';
import { loadOrCreateSigningKey, LOCAL_ALG } from './local-issuer.js';
import type { Principal } from './principal.js';
import { playerOf } from './player-credential.js';
import { GRANT_CLAIM, NO_REVOCATIONS, type Revocations } from './revocations.js';
import { scopesOf } from './scopes.js';
import { TokenCache } from './token-cache.js';

/**
 * The longest `sub` taken (as the admin API's member ids). The subject is stored as the user id in
 * indexed columns, and PostgreSQL cannot index text over about 2,700 bytes.
 */
export const MAX_SUBJECT_LENGTH = 256;

/** The public service's API audience: clients send it, and tokens for it are accepted as Cardshelf's own. */
export const PUBLIC_AUDIENCE = 'https://api.yotoplay.com';

/** Why a token was refused; the message is safe to show to the caller. */
export class TokenRejected extends Error {}

/** The `typ` header of an access token (RFC 9068); an ID token says `JWT`. */
export const ACCESS_TOKEN_TYPE = 'at+jwt';

/** A `typ` as RFC 7515 compares it: without case, `application/` implied. */
const normalType = (typ: unknown): string | undefined =>
  typeof typ === 'string' ? typ.toLowerCase().replace(/^application\//, '') : undefined;

export interface TokenVerifier {
  /** The principal of a valid token that is not revoked; TokenRejected otherwise. */
  verify(token: string): Promise<Principal>;
  /** The local issuer's public keys; `null` when an external issuer signs the tokens. */
  readonly jwks: JSONWebKeySet | null;
}

/**
 * `revocations`: what is refused although signed and unexpired (src/auth/revocations.ts); checked
 * on every call, cache hits included.
 */
export async function createVerifier(auth: AuthConfig, revocations: Revocations = NO_REVOCATIONS): Promise<TokenVerifier> {
  let keys: JWTVerifyGetKey;
  let jwks: JSONWebKeySet | null = null;
  let algorithms: string[] | undefined;
  if (auth.mode === 'local') {
    const key = await loadOrCreateSigningKey(auth.keyFile);
    jwks = { keys: [key.publicJwk] };
    keys = createLocalJWKSet(jwks);
    algorithms = [LOCAL_ALG];
  } else {
    // Fetched on first use and cached; refetched when a token names an unknown key id.
    keys = createRemoteJWKSet(new URL(auth.jwksUrl));
  }
  // The embedded sign-in server (its issuer is the public base URL) signs with the local key too;
  // the public service's audience is an alias of the local one, as clients ask for it.
  const issuer = auth.mode === 'local' ? [auth.issuer, auth.signInIssuer] : auth.issuer;
  const audience = auth.mode === 'local' ? [auth.audience, PUBLIC_AUDIENCE] : auth.audience;
  // An external issuer's tokens are type-checked only when AUTH_TOKEN_TYPE says what they carry.
  const typ = auth.mode === 'oidc' ? auth.tokenType : undefined;
  // An access token without an expiry would be good forever: refuse it like an expired one.
  const options = { issuer, audience, algorithms, typ, requiredClaims: ['exp'] };
  /**
   * The embedded engine signs ID tokens too, with the same key and issuer, and an ID token's `aud`
   * is its client id: only its access tokens (`typ: at+jwt`) are taken. Tokens of `LOCAL_ISSUER`
   * (`cardshelf token`, players' credentials) are never ID tokens; those minted before they
   * carried `at+jwt` keep working, unless that issuer is the engine's too.
   */
  const accessTokensOnly = auth.mode === 'local' ? auth.signInIssuer : undefined;

  // A signature check costs more than the rest of most requests; clients resend one token.
  const verified = new TokenCache();

  return {
    jwks,
    async verify(token: string): Promise<Principal> {
      const principal = verified.get(token) ?? (await verifySignature(token));
      if (revocations.isRevoked(principal)) throw new TokenRejected('token has been revoked');
      return principal;
    },
  };

  async function verifySignature(token: string): Promise<Principal> {
    try {
      const { payload, protectedHeader } = await jwtVerify(token, keys, options);
      if (accessTokensOnly !== undefined && payload.iss === accessTokensOnly && normalType(protectedHeader.typ) !== ACCESS_TOKEN_TYPE) {
        throw new TokenRejected(`token is not an access token (its typ must be ${ACCESS_TOKEN_TYPE})`);
      }
      if (typeof payload.sub !== 'string' || payload.sub === '') {
        throw new TokenRejected('token has no subject (sub)');
      }
      // A lone surrogate would be stored as U+FFFD: two subjects would become one user.
      if (payload.sub.length > MAX_SUBJECT_LENGTH || hasLoneSurrogate(payload.sub)) {
        throw new TokenRejected(`token subject (sub) must be Unicode text of at most ${MAX_SUBJECT_LENGTH} characters`);
      }
      const player = playerOf(payload);
      const grantId = payload[GRANT_CLAIM];
      const principal: Principal = {
        userId: payload.sub,
        scopes: scopesOf(payload),
        ...(payload.exp === undefined ? {} : { expiresAt: payload.exp * 1000 }),
        ...(player ? { player } : {}),
        ...(typeof payload.jti === 'string' ? { tokenId: payload.jti } : {}),
        ...(typeof grantId === 'string' ? { grantId } : {}),
        ...(typeof payload.iat === 'number' ? { issuedAt: payload.iat } : {}),
      };
      verified.set(token, principal, payload.exp);
      return principal;
    } catch (err) {
      throw toRejection(err);
    }
  }
}

/** jose's errors become one of ours here, with a message fit for the caller. */
function toRejection(err: unknown): Error {
  if (err instanceof TokenRejected) return err;
  if (err instanceof joseErrors.JWTExpired) return new TokenRejected('token has expired');
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    return new TokenRejected(`token claim '${err.claim}' is not valid: ${err.reason}`);
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new TokenRejected('token signature is not valid');
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed || err instanceof joseErrors.JOSENotSupported) {
    return new TokenRejected('token algorithm is not accepted');
  }
  if (err instanceof joseErrors.JWKSNoMatchingKey) {
    return new TokenRejected('token is not signed by a known key');
  }
  if (err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JWKSInvalid) {
    // The issuer's key set could not be had: not the caller's fault, so not a 401.
    return err;
  }
  if (err instanceof joseErrors.JOSEError) return new TokenRejected('token is malformed');
  return err instanceof Error ? err : new Error(String(err));
}
