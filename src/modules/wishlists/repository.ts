import type { WishlistRow } from '../../db/database.js';
import { preparedStatement } from '../../db/prepared.js';
import type { Db } from '../../db/unit-of-work.js';
import type { WishlistLabels } from './rules.js';

/** A new wishlist's columns (the version starts at its default). */
export type NewWishlistRow = Pick<WishlistRow, 'wishlist_id' | 'share_id' | 'user_id' | 'content' | 'name' | 'created_at' | 'updated_at'>;

/** The user's wishlist; other users' wishlists are not found, like missing ones. */
const owned = preparedStatement(
  (db, { userId, wishlistId }: { userId: string; wishlistId: string }) =>
    db.selectFrom('wishlists').selectAll().where('wishlist_id', '=', wishlistId).where('user_id', '=', userId),
);

export async function findOwned(db: Db, userId: string, wishlistId: string): Promise<WishlistRow | undefined> {
  const [row] = await owned(db, { userId, wishlistId });
  return row;
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

/** What the shared view's entity tag needs: the version, and the owner's name it shows. */
export async function findVersionByShareId(
  db: Db,
  shareId: string,
): Promise<(Pick<WishlistRow, 'wishlist_id' | 'version'> & { owner_name: string | null }) | undefined> {
  return db
    .selectFrom('wishlists as w')
    .leftJoin('accounts as a', 'a.user_id', 'w.user_id')
    .select(['w.wishlist_id', 'w.version', 'a.display_name as owner_name'])
    .where('w.share_id', '=', shareId)
    .executeTakeFirst();
}

/**
 * A wishlist by its share id, with its owner's display name (null: no account here, as for a
 * user of another issuer).
 */
export async function findByShareId(db: Db, shareId: string): Promise<(WishlistRow & { owner_name: string | null }) | undefined> {
  return db
    .selectFrom('wishlists as w')
    .leftJoin('accounts as a', 'a.user_id', 'w.user_id')
    .selectAll('w')
    .select('a.display_name as owner_name')
    .where('w.share_id', '=', shareId)
    .executeTakeFirst();
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

const countOfUser = preparedStatement(
  (db, { userId }: { userId: string }) =>
    db.selectFrom('wishlists').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId),
);

export async function countByUser(db: Db, userId: string): Promise<number> {
  const [row] = await countOfUser(db, { userId });
  return Number(row?.n ?? 0);
}

const insert = preparedStatement((db, { wishlist_id, share_id, user_id, content, name, created_at, updated_at }: NewWishlistRow) =>
  db.insertInto('wishlists').values({ wishlist_id, share_id, user_id, content, name, created_at, updated_at }),
);

export async function insertWishlist(db: Db, row: NewWishlistRow): Promise<void> {
  await insert(db, row);
}

const update = preparedStatement(
  (db, { content, name, at, wishlistId, userId }: { content: string; at: string; wishlistId: string; userId: string } & WishlistLabels) =>
    db
      .updateTable('wishlists')
      .set((eb) => ({ content, name, updated_at: at, version: eb('version', '+', 1) }))
      .where('wishlist_id', '=', wishlistId)
      .where('user_id', '=', userId)
      .returning('version'),
);

/**
 * Replaces the content and labels in one statement, so concurrent updates never mix two bodies,
 * and bumps the version; the new version, or undefined when the user has no such wishlist.
 */
export async function updateWishlist(
  db: Db,
  userId: string,
  wishlistId: string,
  fields: { content: string } & WishlistLabels,
  at: string,
): Promise<number | undefined> {
  const [row] = await update(db, { ...fields, at, wishlistId, userId });
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
