import { inspect } from 'node:util';
import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { Store, StoreDialect } from './dialect.js';
import { initial } from './migrations/001-initial.js';
import { media } from './migrations/002-media.js';
import { readinessProbe } from './migrations/003-readiness-probe.js';
import { conditionalRequests } from './migrations/004-conditional-requests.js';
import { transcodeTurns } from './migrations/005-transcode-turns.js';
import { signIn } from './migrations/006-sign-in.js';
import { signInOwners } from './migrations/007-sign-in-owners.js';
import { liveEvents } from './migrations/008-live-events.js';
import { players } from './migrations/009-players.js';
import { passkeys } from './migrations/010-passkeys.js';
import { tokenRevocations } from './migrations/011-token-revocations.js';
import { accountSessions } from './migrations/012-account-sessions.js';
import { links } from './migrations/013-links.js';
import { wishlistNames } from './migrations/014-wishlist-names.js';

/** The migrations, in order, by name. Names sort; each is built for the dialect it runs on. */
const MIGRATIONS: readonly (readonly [name: string, build: (dialect: StoreDialect) => Migration])[] = [
  ['001-initial', initial],
  ['002-media', media],
  ['003-readiness-probe', readinessProbe],
  ['004-conditional-requests', conditionalRequests],
  ['005-transcode-turns', transcodeTurns],
  ['006-sign-in', signIn],
  ['007-sign-in-owners', signInOwners],
  ['008-live-events', liveEvents],
  ['009-players', players],
  ['010-passkeys', passkeys],
  ['011-token-revocations', tokenRevocations],
  ['012-account-sessions', accountSessions],
  ['013-links', links],
  ['014-wishlist-names', wishlistNames],
];

/** The names of the migrations, in the order they run (and are recorded in). */
export const MIGRATION_NAMES: readonly string[] = MIGRATIONS.map(([name]) => name);

function migrations(dialect: StoreDialect): Record<string, Migration> {
  return Object.fromEntries(MIGRATIONS.map(([name, build]) => [name, build(dialect)]));
}

/**
 * Brings the schema up to date. Instances that start together never run a migration twice:
 * Kysely's Migrator holds an advisory lock on PostgreSQL, and on SQLite runs in one transaction
 * that holds the write lock (see sqlite.ts). test/process/migrate.test.ts races processes to check it.
 */
export async function migrateToLatest(store: Store): Promise<MigrationResultSet> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(store.dialect) };
  const result = await new Migrator({ db: store.db, provider }).migrateToLatest();
  if (result.error) {
    throw result.error instanceof Error ? result.error : new Error(inspect(result.error));
  }
  return result;
}
