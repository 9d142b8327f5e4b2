/** Who a verified token speaks for. */
export interface Principal {
  /** The user id: the token's `sub`. A player's token names the member who registered it. */
  userId: string;
  scopes: ReadonlySet<string>;
  /** Set when the token is a registered player's credential (src/auth/player-credential.ts). */
  player?: { deviceId: string; credentialId: string };
  /** When the token expires (ms since the epoch): long-lived answers (event streams) end then. */
  expiresAt?: number;
  /** What a revocation names (src/auth/revocations.ts): its `jti`, its engine grant, its `iat` (seconds). */
  tokenId?: string;
  grantId?: string;
  issuedAt?: number;
}
