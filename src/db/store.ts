import type { DatabaseConfig } from './config.js';
import type { Store, StoreDialect } from './dialect.js';
import { postgresDialect } from './postgres.js';
import { sqliteDialect } from './sqlite.js';

export function dialectFor(database: DatabaseConfig): StoreDialect {
  switch (database.kind) {
    case 'sqlite':
      return sqliteDialect(database);
    case 'postgres':
      return postgresDialect(database);
  }
}

export function openStore(database: DatabaseConfig): Store {
  const dialect = dialectFor(database);
  return { db: dialect.createKysely(), dialect };
}
