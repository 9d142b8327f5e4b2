import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * Token revocations (issue 33, row 4): what every instance's token check refuses although the
 * signature and expiry hold (src/auth/revocations.ts mirrors it in memory). One row per revocation:
 *
 * - `kind` `grant`: the access tokens of an engine grant (`subject` its id), revoked with the grant;
 *   `token`: one access token (`subject` its `jti`); `account`: every token of a user id
 *   (`subject`) issued before `revoked_at` (a disable or a password reset).
 * - `id` orders the rows as they commit (writers take one lock first), so an instance that read
 *   up to id n has seen every revocation below it; it then reads only what is newer.
 * - `expires_at`: when the tokens the row covers have all expired, after which it is deleted;
 *   null for an account's row, which covers tokens of any lifetime (a newer one replaces it).
 */
export function tokenRevocations(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const { text } = dialect;
      await db.schema
        .createTable('token_revocations')
        // SQLite's AUTOINCREMENT needs `integer` (64 bits there); PostgreSQL's integer is 32 bits.
        .addColumn('id', dialect.name === 'postgres' ? 'bigint' : 'integer', (c) => dialect.autoIncrementPrimaryKey(c))
        .addColumn('kind', text, (c) => c.notNull())
        .addColumn('subject', text, (c) => c.notNull())
        .addColumn('revoked_at', text, (c) => c.notNull())
        .addColumn('expires_at', text)
        .execute();
      await db.schema.createIndex('token_revocations_expiry').on('token_revocations').columns(['expires_at']).execute();
      await db.schema.createIndex('token_revocations_subject').on('token_revocations').columns(['kind', 'subject']).execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('token_revocations').execute();
    },
  };
}
