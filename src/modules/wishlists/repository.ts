import type { Insertable } from 'kysely';
import type { WishlistRow, WishlistsTable } from '../../db/database.js';
import type { Db } from '../../db/unit-of-work.js';

/** The user's wishlist; other users' wishlists are not found, like missing ones. */
export async function findOwned(db: Db, userId: string, wishlistId: string): Promise<WishlistRow | undefined> {
  return db
    .selectFrom('wishlists')
    .selectAll()
    .where('wishlist_id', '=', wishlistId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** The id and version of the user's wishlist (what its entity tag needs), or undefined. */
export async function findOwnedVersion(
  db: Db,
  userId: string,
  wishlistId: string,
): Promise<Pick<WishlistRow, 'wishlist_id' | 'version'> | undefined> {
  return db
    .selectFrom('wishlists')
    .select(['wishlist_id', 'version'])
    .where('wishlist_id', '=', wishlistId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function findVersionByShareId(
  db: Db,
  shareId: string,
): Promise<Pick<WishlistRow, 'wishlist_id' | 'version'> | undefined> {
  return db.selectFrom('wishlists').select(['wishlist_id', 'version']).where('share_id', '=', shareId).executeTakeFirst();
}

export async function findByShareId(db: Db, shareId: string): Promise<WishlistRow | undefined> {
  return db.selectFrom('wishlists').selectAll().where('share_id', '=', shareId).executeTakeFirst();
}

export async function listByUser(db: Db, userId: string): Promise<WishlistRow[]> {
  return db
    .selectFrom('wishlists')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('wishlist_id')
    .execute();
}

export async function countByUser(db: Db, userId: string): Promise<number> {
  const row = await db
    .selectFrom('wishlists')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertWishlist(db: Db, row: Insertable<WishlistsTable>): Promise<void> {
  await db.insertInto('wishlists').values(row).execute();
}

/**
 * Replaces the content in one statement, so concurrent updates never mix two bodies, and bumps
 * the version; the new version, or undefined when the user has no such wishlist.
 */
export async function updateContent(
  db: Db,
  userId: string,
  wishlistId: string,
  content: string,
  at: string,
): Promise<number | undefined> {
  const row = await db
    .updateTable('wishlists')
    .set((eb) => ({ content, updated_at: at, version: eb('version', '+', 1) }))
    .where('wishlist_id', '=', wishlistId)
    .where('user_id', '=', userId)
    .returning('version')
    .executeTakeFirst();
  return row?.version;
}

export async function deleteOwned(db: Db, userId: string, wishlistId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('wishlists')
    .where('wishlist_id', '=', wishlistId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
