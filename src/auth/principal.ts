/** Who a verified token speaks for. */
export interface Principal {
  /** The user id: the token's `sub`. */
  userId: string;
  scopes: ReadonlySet<string>;
  /** When the token expires (ms since the epoch): long-lived answers (event streams) end then. */
  expiresAt?: number;
}
