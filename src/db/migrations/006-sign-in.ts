import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * Signing in (issue 19).
 *
 * - `accounts`: who may sign in. `user_id` is the `sub` tokens carry (an existing id such as
 *   `auth0|...` can be claimed by an account); `email_key` is the email folded to lower case, and
 *   its unique key is the rule "one account per email, whatever its case".
 * - `oauth_records`: everything the OAuth engine stores (grants, codes, tokens, sessions,
 *   interactions), one row per model and id, its payload as JSON. `expires_at` lets the sweep
 *   remove what has expired; the other keys are the engine's look-ups (src/oauth/adapter.ts).
 * - `throttle_counters`: attempts at what an attacker can repeat (failed sign-ins per email and
 *   per address, wrong device codes, device-code requests), so every instance throttles alike
 *   (src/accounts/throttle.ts).
 * - `invitations`: links that let one person make an account and join the inviter's family;
 *   only a SHA-256 of the link's secret is kept (src/accounts/invitations.ts).
 */
export function signIn(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const { text } = dialect;
      await db.schema
        .createTable('accounts')
        .addColumn('user_id', text, (c) => c.primaryKey())
        .addColumn('email', text, (c) => c.notNull())
        .addColumn('email_key', text, (c) => c.notNull().unique())
        .addColumn('display_name', text, (c) => c.notNull())
        /** argon2id, in its PHC string form; null: no password (the account cannot sign in with one). */
        .addColumn('password_hash', text)
        .addColumn('owner', 'integer', (c) => c.notNull())
        .addColumn('disabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('oauth_records')
        .addColumn('model', text, (c) => c.notNull())
        .addColumn('id', text, (c) => c.notNull())
        .addColumn('payload', text, (c) => c.notNull())
        .addColumn('grant_id', text)
        .addColumn('user_code', text)
        .addColumn('uid', text)
        .addColumn('expires_at', text)
        .addPrimaryKeyConstraint('oauth_records_pk', ['model', 'id'])
        .execute();
      await db.schema.createIndex('oauth_records_grant').on('oauth_records').columns(['grant_id']).execute();
      await db.schema.createIndex('oauth_records_user_code').on('oauth_records').columns(['model', 'user_code']).execute();
      await db.schema.createIndex('oauth_records_uid').on('oauth_records').columns(['model', 'uid']).execute();
      await db.schema.createIndex('oauth_records_expiry').on('oauth_records').columns(['expires_at']).execute();

      await db.schema
        .createTable('throttle_counters')
        /** `<rule>:<subject>`, such as `signInEmail:ann@example.com` or `codeEntry:192.0.2.7`. */
        .addColumn('key', text, (c) => c.primaryKey())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('last_attempt_at', text, (c) => c.notNull())
        .addColumn('locked_until', text, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('invitations')
        .addColumn('secret_hash', text, (c) => c.primaryKey())
        .addColumn('family_id', text, (c) => c.notNull())
        .addColumn('invited_by', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('expires_at', text, (c) => c.notNull())
        /** Set when the link is used: it cannot be used again. */
        .addColumn('used_at', text)
        .addColumn('used_by', text)
        .execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('invitations').execute();
      await db.schema.dropTable('throttle_counters').execute();
      await db.schema.dropTable('oauth_records').execute();
      await db.schema.dropTable('accounts').execute();
    },
  };
}
