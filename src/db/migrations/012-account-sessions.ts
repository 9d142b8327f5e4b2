import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * The account page's sessions (issue 33, row 14; src/accounts/account-sessions.ts), kept on the
 * server so that signing out, disabling the account or resetting its password ends them at once.
 *
 * - `id`: the SHA-256 (hex) of the cookie's secret; the secret itself is never stored.
 * - `confirmed_at`: when the password was last entered in this session (signing in, or
 *   confirming it again); credential changes need it recent.
 * - `expires_at`: 12 hours after signing in; the sweep removes what is past it.
 */
export function accountSessions(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const { text } = dialect;
      await db.schema
        .createTable('account_sessions')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('user_id', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('confirmed_at', text, (c) => c.notNull())
        .addColumn('expires_at', text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('account_sessions_user').on('account_sessions').columns(['user_id']).execute();
      await db.schema.createIndex('account_sessions_expiry').on('account_sessions').columns(['expires_at']).execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('account_sessions').execute();
    },
  };
}
