import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * Conditional requests and safe retries (issue 12).
 *
 * - `version` on cards, groups and wishlists: bumped by every write of the row, so a single
 *   resource's entity tag (and `If-Match`) needs no hash of its answer.
 * - `change_counters`: one counter per scope of data a list or family read shows (a user's
 *   cards, a family, a family's groups, a user's wishlists, the catalogue), bumped in the
 *   transaction of every write that can change such an answer (src/db/change-counters.ts).
 * - `idempotency_keys`: the first answer to a POST sent with an `Idempotency-Key`, per user and
 *   key; the primary key decides which of racing requests runs (src/http/idempotency.ts).
 */
export function conditionalRequests(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const { text } = dialect;
      for (const table of ['cards', 'library_groups', 'wishlists']) {
        await db.schema
          .alterTable(table)
          .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
          .execute();
      }

      await db.schema
        .createTable('change_counters')
        .addColumn('scope', text, (c) => c.primaryKey())
        .addColumn('version', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('idempotency_keys')
        .addColumn('user_id', text, (c) => c.notNull())
        .addColumn('idempotency_key', text, (c) => c.notNull())
        /** SHA-256 of the method, the path with its query, and the JSON body. */
        .addColumn('fingerprint', text, (c) => c.notNull())
        /** `in-flight` (claimed, running) or `done` (the answer below is stored). */
        .addColumn('state', text, (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('content_type', text)
        .addColumn('body', text)
        .addColumn('created_at', text, (c) => c.notNull())
        /** When the running request claimed it: an in-flight key older than its lease is abandoned. */
        .addColumn('claimed_at', text, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['user_id', 'idempotency_key'])
        .execute();
      // The sweep removes expired keys in creation order.
      await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').columns(['created_at']).execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('idempotency_keys').execute();
      await db.schema.dropTable('change_counters').execute();
      for (const table of ['cards', 'library_groups', 'wishlists']) {
        await db.schema.alterTable(table).dropColumn('version').execute();
      }
    },
  };
}
