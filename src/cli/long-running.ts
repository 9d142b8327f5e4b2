import type { DatabaseConfig } from '../db/config.js';
import { err } from './run.js';

/**
 * Export and import run for minutes on a big instance: a statement may take longer than a
 * request's, and waiting for the servers' write lock is better than failing.
 */
export function transferDatabase(database: DatabaseConfig): DatabaseConfig {
  return { ...database, statementTimeoutMs: Math.max(database.statementTimeoutMs, 120_000) };
}

/** A line on stderr every 2 seconds, when stderr is a terminal (never in a pipe or a log). */
export function terminalProgress(): ((line: string) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  let last = 0;
  return (line) => {
    if (performance.now() - last < 2000) return;
    last = performance.now();
    err(line);
  };
}
