/** Who a verified token speaks for. */
export interface Principal {
  /** The user id: the token's `sub`. */
  userId: string;
  scopes: ReadonlySet<string>;
}
