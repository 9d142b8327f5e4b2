import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * Signing in, the rest (issue 19).
 *
 * - `oauth_records.account_id` and `client_id`: whose and which app's a grant, code or token is,
 *   from its payload, so the account page lists an account's signed-in apps and
 *   `cardshelf client remove` ends an app's sign-ins without reading every payload. Rows written
 *   before this migration are filled in here.
 * - `setup_links`: the one-time link `serve` prints on an empty instance to make the first owner;
 *   like invitations, only a SHA-256 of its secret is kept (src/accounts/setup-link.ts).
 */
export function signInOwners(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const { text } = dialect;
      await db.schema.alterTable('oauth_records').addColumn('account_id', text).execute();
      await db.schema.alterTable('oauth_records').addColumn('client_id', text).execute();
      const rows = (await db.selectFrom('oauth_records').select(['model', 'id', 'payload']).execute()) as { model: string; id: string; payload: string }[];
      for (const row of rows) {
        const payload = JSON.parse(row.payload) as { accountId?: unknown; clientId?: unknown };
        const account_id = typeof payload.accountId === 'string' ? payload.accountId : null;
        const client_id = typeof payload.clientId === 'string' ? payload.clientId : null;
        if (account_id === null && client_id === null) continue;
        await db.updateTable('oauth_records').set({ account_id, client_id }).where('model', '=', row.model).where('id', '=', row.id).execute();
      }
      await db.schema.createIndex('oauth_records_account').on('oauth_records').columns(['account_id', 'model']).execute();
      await db.schema.createIndex('oauth_records_client').on('oauth_records').columns(['client_id']).execute();

      await db.schema
        .createTable('setup_links')
        .addColumn('secret_hash', text, (c) => c.primaryKey())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('expires_at', text, (c) => c.notNull())
        /** Set when the link is used: it cannot be used again. */
        .addColumn('used_at', text)
        .execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('setup_links').execute();
      await db.schema.dropIndex('oauth_records_client').execute();
      await db.schema.dropIndex('oauth_records_account').execute();
      await db.schema.alterTable('oauth_records').dropColumn('client_id').execute();
      await db.schema.alterTable('oauth_records').dropColumn('account_id').execute();
    },
  };
}
