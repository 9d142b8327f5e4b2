import type { Kysely, Migration } from 'kysely';

/**
 * Live events in commit order without a lock (issue 21; modules/events/publish.ts says why):
 * each event keeps the id of the transaction that wrote it (`tx_id`, PostgreSQL's
 * `pg_current_xact_id()`; 0 on SQLite, whose single writer commits in id order), and streams
 * follow the log in the order (tx_id, id). The indexes serve that order: the whole log (an
 * instance's wake), a family's and a user's (a stream's replay).
 */
export function liveEventsOrder(): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('live_events').addColumn('tx_id', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.dropIndex('live_events_family').execute();
      await db.schema.dropIndex('live_events_user').execute();
      await db.schema.createIndex('live_events_order').on('live_events').columns(['tx_id', 'id']).execute();
      await db.schema.createIndex('live_events_family').on('live_events').columns(['family_id', 'tx_id', 'id']).execute();
      await db.schema.createIndex('live_events_user').on('live_events').columns(['user_id', 'tx_id', 'id']).execute();
      // Events written before get 0: committed already, they sort before every new one, in id
      // order as they were sent.
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropIndex('live_events_order').execute();
      await db.schema.dropIndex('live_events_family').execute();
      await db.schema.dropIndex('live_events_user').execute();
      await db.schema.alterTable('live_events').dropColumn('tx_id').execute();
      await db.schema.createIndex('live_events_family').on('live_events').columns(['family_id', 'id']).execute();
      await db.schema.createIndex('live_events_user').on('live_events').columns(['user_id', 'id']).execute();
    },
  };
}
