import type { Kysely, Migration } from 'kysely';
import type { StoreDialect } from '../dialect.js';

/**
 * A wishlist's name (issue 35, row 7): nullable, since the interface's wishlists have none and
 * those made before stay unnamed. A column of its own, not a field in `content`, so that a PUT
 * of the content alone (as the interface's clients send it) keeps the name.
 */
export function wishlistNames(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('wishlists').addColumn('name', dialect.text).execute();
    },
    async down(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('wishlists').dropColumn('name').execute();
    },
  };
}
