import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * Live family events (issue 21): the log that `GET /user/family/events` streams and replays.
 * Each row is written in the transaction of the change it describes (modules/events/publish.ts),
 * so the log is the truth and a notification only wakes readers. `family_id` or `user_id` says
 * who may see it (the family's members, or that user alone); exactly one of them is set. Rows
 * older than the retention are deleted (modules/events/repository.ts, run by hub.ts), and the highest id deleted is
 * kept as the change counter `events:pruned`: a resume from before it gets a `reset` event.
 */
export function liveEvents(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const { text } = dialect;
      await db.schema
        .createTable('live_events')
        // SQLite's AUTOINCREMENT needs `integer` (64 bits there); PostgreSQL's integer is 32 bits.
        .addColumn('id', dialect.name === 'postgres' ? 'bigint' : 'integer', (c) => dialect.autoIncrementPrimaryKey(c))
        .addColumn('family_id', text)
        .addColumn('user_id', text)
        .addColumn('kind', text, (c) => c.notNull())
        .addColumn('at', text, (c) => c.notNull())
        /** JSON object: the event as streamed, without its id. */
        .addColumn('data', text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('live_events_family').on('live_events').columns(['family_id', 'id']).execute();
      await db.schema.createIndex('live_events_user').on('live_events').columns(['user_id', 'id']).execute();
      await db.schema.createIndex('live_events_at').on('live_events').columns(['at']).execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.dropTable('live_events').execute();
    },
  };
}
