import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * Passkeys (issue 19): WebAuthn credentials as a second way to sign in (src/accounts/passkeys.ts).
 *
 * - `passkeys`: one row per credential. `id` is the credential id and `public_key` the COSE
 *   public key, both base64url text (the same on both stores); `counter` is the authenticator's
 *   signature counter (a uint32, so bigint on PostgreSQL); `transports` a JSON array of hints.
 * - `passkey_challenges`: the challenges handed out, kept in the database so that any instance
 *   can verify the answer. Each is bound to what it was asked for (`purpose` and `subject`: the
 *   signed-in account for a registration, the sign-in interaction for an authentication), is good
 *   until `expires_at`, and is deleted when used, so it is used once at most.
 */
export function passkeys(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const { text } = dialect;
      await db.schema
        .createTable('passkeys')
        .addColumn('id', text, (c) => c.primaryKey())
        .addColumn('user_id', text, (c) => c.notNull())
        .addColumn('public_key', text, (c) => c.notNull())
        .addColumn('counter', 'bigint', (c) => c.notNull())
        .addColumn('transports', text, (c) => c.notNull())
        .addColumn('name', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('last_used_at', text)
        .execute();
      await db.schema.createIndex('passkeys_user').on('passkeys').columns(['user_id']).execute();

      await db.schema
        .createTable('passkey_challenges')
        .addColumn('challenge', text, (c) => c.primaryKey())
        /** `registration` or `authentication`. */
        .addColumn('purpose', text, (c) => c.notNull())
        /** The account's user id (registration) or the interaction's uid (authentication). */
        .addColumn('subject', text, (c) => c.notNull())
        .addColumn('expires_at', text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('passkey_challenges_expiry').on('passkey_challenges').columns(['expires_at']).execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('passkey_challenges').execute();
      await db.schema.dropTable('passkeys').execute();
    },
  };
}
