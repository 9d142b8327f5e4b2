import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect, sql, type Driver } from 'kysely';
import pg from 'pg';
import type { Database } from './database.js';
import type { StoreDialect } from './dialect.js';
import { refuseNulText } from './text-guard.js';

/** Text parameters with U+0000 are refused before PostgreSQL fails on them: see text-guard.ts. */
class GuardedPostgresDialect extends PostgresDialect {
  override createDriver(): Driver {
    return refuseNulText(super.createDriver());
  }
}

/**
 * The advisory-lock id of a key: the first 64 bits of its SHA-256, as a signed bigint (the type
 * pg_advisory_xact_lock takes). Computed here rather than with a server hash function so that it
 * does not depend on the server version. Two keys sharing an id only wait for each other.
 */
function advisoryLockId(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest().readBigInt64BE(0).toString();
}

export function postgresDialect(url: string, poolSize: number): StoreDialect {
  let pool: pg.Pool | undefined;
  return {
    name: 'postgres',
    createKysely: () => {
      pool = new pg.Pool({ connectionString: url, max: poolSize });
      // An idle connection that breaks (server restart, network) is dropped by the pool and the
      // next checkout opens a new one; without a listener the event would end the process.
      pool.on('error', () => {});
      return new Kysely<Database>({ dialect: new GuardedPostgresDialect({ pool }) });
    },
    // Transaction-scoped: every instance on the database waits for it, and commit or rollback
    // releases it, so a request that fails half-way cannot leave it held.
    lockKey: async (trx, key) => {
      await sql`select pg_advisory_xact_lock(cast(${advisoryLockId(key)} as bigint))`.execute(trx);
    },
    // `by default` rather than `always`: rows copied from another database keep their ids.
    autoIncrementPrimaryKey: (col) => col.generatedByDefaultAsIdentity().primaryKey(),
    // The database's default collation may be linguistic (en_US ignores punctuation, mixes case);
    // "C" compares bytes, which for UTF-8 is code point order, as SQLite does.
    text: sql`text collate "C"`,
    poolStats: () => ({
      total: pool?.totalCount ?? 0,
      idle: pool?.idleCount ?? 0,
      waiting: pool?.waitingCount ?? 0,
      max: poolSize,
    }),
  };
}
