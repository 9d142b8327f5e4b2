import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * The first schema. Portable types only (text, integer): see database.ts; text columns take the
 * dialect's byte-wise text type, so lists sort alike on every database. Every lookup a route
 * makes has an index; every invariant that concurrency could break has a key.
 */
export function initial(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const { text } = dialect;
      await db.schema
        .createTable('cards')
        .addColumn('card_id', text, (c) => c.primaryKey())
        .addColumn('user_id', text, (c) => c.notNull())
        .addColumn('origin', text, (c) => c.notNull())
        .addColumn('is_free', 'integer', (c) => c.notNull())
        .addColumn('in_club', 'integer', (c) => c.notNull())
        .addColumn('deleted', 'integer', (c) => c.notNull())
        .addColumn('sortkey', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .addColumn('doc', text, (c) => c.notNull())
        .addColumn('summary', text, (c) => c.notNull())
        .execute();
      // GET /content/mine: a user's MYO cards in list order.
      await db.schema
        .createIndex('cards_owner_list')
        .on('cards')
        .columns(['user_id', 'origin', 'sortkey', 'card_id'])
        .execute();

      await db.schema
        .createTable('families')
        .addColumn('family_id', text, (c) => c.primaryKey())
        .addColumn('country', text, (c) => c.notNull())
        .addColumn('flags', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .execute();

      // The primary key on user_id is the rule "every user belongs to at most one family".
      await db.schema
        .createTable('family_memberships')
        .addColumn('user_id', text, (c) => c.primaryKey())
        .addColumn('family_id', text, (c) =>
          c.notNull().references('families.family_id').onDelete('cascade'),
        )
        .addColumn('listed', 'integer', (c) => c.notNull())
        .addColumn('added_at', text, (c) => c.notNull())
        .addColumn('approved', 'integer', (c) => c.notNull())
        .addColumn('approved_at', text)
        .addColumn('verified', 'integer', (c) => c.notNull())
        .addColumn('verified_email', text)
        .addColumn('position', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('family_memberships_family')
        .on('family_memberships')
        .columns(['family_id', 'position'])
        .execute();

      await db.schema
        .createTable('family_devices')
        .addColumn('device_id', text, (c) => c.primaryKey())
        .addColumn('family_id', text, (c) =>
          c.notNull().references('families.family_id').onDelete('cascade'),
        )
        .addColumn('added_at', text, (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('family_devices_family')
        .on('family_devices')
        .columns(['family_id', 'position'])
        .execute();

      await db.schema
        .createTable('family_events')
        .addColumn('id', 'integer', (c) => dialect.autoIncrementPrimaryKey(c))
        .addColumn('family_id', text, (c) =>
          c.notNull().references('families.family_id').onDelete('cascade'),
        )
        .addColumn('type', text, (c) => c.notNull())
        .addColumn('at', text, (c) => c.notNull())
        .addColumn('details', text, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('family_events_family')
        .on('family_events')
        .columns(['family_id', 'id'])
        .execute();

      // The unique key is the rule "one library record per family and card".
      await db.schema
        .createTable('library_records')
        .addColumn('record_id', text, (c) => c.primaryKey())
        .addColumn('family_id', text, (c) =>
          c.notNull().references('families.family_id').onDelete('cascade'),
        )
        .addColumn('card_id', text, (c) => c.notNull())
        .addColumn('provenance_id', text, (c) => c.notNull())
        .addColumn('reason', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .addUniqueConstraint('library_records_family_card', ['family_id', 'card_id'])
        .execute();
      // Card reads: "is this card in the caller's family library?" is answered by the unique
      // key; listing a family's library in order needs this one.
      await db.schema
        .createIndex('library_records_family_order')
        .on('library_records')
        .columns(['family_id', 'created_at', 'record_id'])
        .execute();

      await db.schema
        .createTable('library_groups')
        .addColumn('group_id', text, (c) => c.primaryKey())
        .addColumn('family_id', text, (c) =>
          c.notNull().references('families.family_id').onDelete('cascade'),
        )
        .addColumn('name', text, (c) => c.notNull())
        .addColumn('image_id', text, (c) => c.notNull())
        .addColumn('items', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('last_modified_at', text, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('library_groups_family')
        .on('library_groups')
        .columns(['family_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('wishlists')
        .addColumn('wishlist_id', text, (c) => c.primaryKey())
        .addColumn('share_id', text, (c) => c.notNull().unique())
        .addColumn('user_id', text, (c) => c.notNull())
        .addColumn('content', text, (c) => c.notNull())
        .addColumn('created_at', text, (c) => c.notNull())
        .addColumn('updated_at', text, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('wishlists_user')
        .on('wishlists')
        .columns(['user_id', 'created_at'])
        .execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      for (const table of [
        'wishlists',
        'library_groups',
        'library_records',
        'family_events',
        'family_devices',
        'family_memberships',
        'families',
        'cards',
      ]) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
