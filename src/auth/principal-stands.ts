import type { Principal } from './principal.js';

/**
 * Whether a verified token still gives its holder the right to act: asked where one check of
 * the token outlives many moments (an event stream, at its start and at each heartbeat). The one
 * place every such check is added to (issue 33); each request's own checks are the auth plugin's.
 */
export type PrincipalStands = (principal: Principal) => Promise<boolean>;

export interface PrincipalChecks {
  /** The revocation list (src/auth/revocations.ts): its grant, the token, or its account revoked since. */
  isRevoked: (principal: Principal) => boolean;
  /** A player's credential: its device registered with it, its member in the device's family. */
  playerCredentialStands: (player: NonNullable<Principal['player']>, userId: string) => Promise<boolean>;
  /** Whether the user's account was disabled (a `sub` without an account, an external issuer's, never is). */
  accountDisabled: (userId: string) => Promise<boolean>;
}

export function principalStandsCheck(checks: PrincipalChecks): PrincipalStands {
  return async (principal) => {
    const { userId, player } = principal;
    // In memory, so first: a revoked token costs no read.
    if (checks.isRevoked(principal)) return false;
    if (player && !(await checks.playerCredentialStands(player, userId))) return false;
    return !(await checks.accountDisabled(userId));
  };
}
