import type { WishlistRow } from '../../db/database.js';
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

export async function insertWishlist(db: Db, row: WishlistRow): Promise<void> {
  await db.insertInto('wishlists').values(row).execute();
}

/** Replaces the content in one statement, so concurrent updates never mix two bodies. */
export async function updateContent(
  db: Db,
  userId: string,
  wishlistId: string,
  content: string,
  at: string,
): Promise<boolean> {
  const result = await db
    .updateTable('wishlists')
    .set({ content, updated_at: at })
    .where('wishlist_id', '=', wishlistId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteOwned(db: Db, userId: string, wishlistId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('wishlists')
    .where('wishlist_id', '=', wishlistId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
