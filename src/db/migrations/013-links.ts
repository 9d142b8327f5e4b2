import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * Linked services (issue 34; DECISIONS.md "Linked services"; src/modules/links/).
 *
 * - `links`: a member's account on another service that speaks this interface. The remote's
 *   device code and tokens are sealed (`*_sealed`, AES-256-GCM under a key derived from the
 *   instance's secret, src/modules/links/secret-box.ts); nothing else about them is stored.
 *   `next_poll_at` is when the sign-in is polled next; an instance claims a poll by moving it.
 * - `link_cards`: which remote card is which local card, and what each side looked like at the
 *   last copy (`remote_fingerprint`, the SHA-256 of the remote's card; `local_version`, the local
 *   card's version), so an unchanged card copies nothing and one changed on both sides is left.
 * - `link_jobs`: pulls and pushes, claimed by any instance under a lease (as transcodes are);
 *   `cards` holds each card's outcome as JSON, so a job resumed elsewhere skips what is done.
 */
export function links(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const { text } = dialect;
      await db.schema
        .createTable('links')
        .addColumn('link_id', text, (c) => c.primaryKey())
        .addColumn('user_id', text, (c) => c.notNull())
        .addColumn('name', text, (c) => c.notNull())
        .addColumn('api_base_url', text, (c) => c.notNull())
        .addColumn('auth_base_url', text, (c) => c.notNull())
        .addColumn('client_id', text, (c) => c.notNull())
        .addColumn('audience', text)
        .addColumn('state', text, (c) => c.notNull())
        .addColumn('reason', text)
        .addColumn('user_code', text)
        .addColumn('verification_uri', text)
        .addColumn('verification_uri_complete', text)
        .addColumn('expires_at', text)
        .addColumn('device_code_sealed', text)
        .addColumn('poll_interval', 'integer', (c) => c.notNull().defaultTo(5))
        .addColumn('next_poll_at', text)
        .addColumn('refresh_token_sealed', text)
        .addColumn('access_token_sealed', text)
        .addColumn('access_expires_at', text)
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('links_user').on('links').columns(['user_id']).execute();
      await db.schema.createIndex('links_polls').on('links').columns(['state', 'next_poll_at']).execute();
      await db.schema
        .createTable('link_cards')
        .addColumn('link_id', text, (c) => c.notNull())
        .addColumn('remote_card_id', text, (c) => c.notNull())
        .addColumn('local_card_id', text, (c) => c.notNull())
        .addColumn('remote_fingerprint', text, (c) => c.notNull())
        .addColumn('local_version', 'integer', (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .addPrimaryKeyConstraint('link_cards_pk', ['link_id', 'remote_card_id'])
        .addUniqueConstraint('link_cards_local', ['link_id', 'local_card_id'])
        .execute();
      await db.schema
        .createTable('link_jobs')
        .addColumn('job_id', text, (c) => c.primaryKey())
        .addColumn('link_id', text, (c) => c.notNull())
        .addColumn('user_id', text, (c) => c.notNull())
        .addColumn('kind', text, (c) => c.notNull())
        .addColumn('state', text, (c) => c.notNull())
        .addColumn('request', text, (c) => c.notNull())
        .addColumn('cards', text, (c) => c.notNull())
        .addColumn('files_done', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('files_total', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('error', text)
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_until', text)
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('link_jobs_link').on('link_jobs').columns(['link_id', 'created_at']).execute();
      await db.schema.createIndex('link_jobs_queue').on('link_jobs').columns(['state', 'lease_until']).execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('link_jobs').execute();
      await db.schema.dropTable('link_cards').execute();
      await db.schema.dropTable('links').execute();
    },
  };
}
