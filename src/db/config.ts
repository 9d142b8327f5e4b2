/**
 * What the database layer needs to open a store. The application's configuration builds it
 * from the environment (src/config.ts); the database layer knows nothing of where it came from.
 */
export type DatabaseConfig = SqliteConfig | PostgresConfig;

export interface SqliteConfig {
  kind: 'sqlite';
  file: string;
  /** How long a statement waits for another process's write lock (SQLite's busy timeout). */
  statementTimeoutMs: number;
}

export interface PostgresConfig {
  kind: 'postgres';
  url: string;
  poolSize: number;
  /** The longest wait for a connection: a free one from the pool, or a new one made. */
  connectTimeoutMs: number;
  /** The longest a statement may run (or wait for a lock) on the server. */
  statementTimeoutMs: number;
  /** The longest a transaction may sit idle between statements before the server ends it. */
  idleInTransactionTimeoutMs: number;
}
