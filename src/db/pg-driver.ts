import { createRequire } from 'node:module';
import type PgModule from 'pg';

let loaded: typeof PgModule | undefined;

/**
 * node-postgres, loaded when a PostgreSQL store first needs it: a server on SQLite never loads
 * it (a few MB of a process's memory at rest). It is a CommonJS package, so `require` loads it
 * synchronously where a pool or a listener is made.
 */
export function pgDriver(): typeof PgModule {
  return (loaded ??= createRequire(import.meta.url)('pg') as typeof PgModule);
}
