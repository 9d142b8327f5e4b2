import { sql } from 'kysely';
import type { Config } from '../config.js';
import type { Store, StoreDialect } from './dialect.js';
import { postgresDialect } from './postgres.js';
import { sqliteDialect } from './sqlite.js';

export function dialectFor(database: Config['database']): StoreDialect {
  switch (database.kind) {
    case 'sqlite':
      return sqliteDialect(database.file);
    case 'postgres':
      return postgresDialect(database.url, database.poolSize);
  }
}

export function openStore(database: Config['database']): Store {
  const dialect = dialectFor(database);
  return { db: dialect.createKysely(), dialect };
}

/** True when the database answers a trivial query. */
export async function isReady(store: Store): Promise<boolean> {
  try {
    await sql`select 1`.execute(store.db);
    return true;
  } catch {
    return false;
  }
}
