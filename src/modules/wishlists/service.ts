import type { WishlistRow } from '../../db/database.js';
import type { Store } from '../../db/dialect.js';
import { inUnitOfWork, userLock } from '../../db/unit-of-work.js';
import { now } from '../../shared/clock.js';
import { AppError, notFound } from '../../shared/errors.js';
import { newUrlSafeId } from '../../shared/ids.js';
import { rawArray, wrapRaw, type RawJson } from '../../shared/raw-json.js';
import * as repo from './repository.js';
import { checkWishlistLimit, checkWishlistSize, renderWishlist } from './rules.js';
import type { WishlistBody } from './schemas.js';

export interface WishlistService {
  create(userId: string, body: WishlistBody): Promise<RawJson>;
  update(userId: string, wishlistId: string, body: WishlistBody): Promise<RawJson>;
  list(userId: string): Promise<RawJson>;
  get(userId: string, wishlistId: string): Promise<RawJson>;
  remove(userId: string, wishlistId: string): Promise<void>;
  /** A wishlist by its share id, for any signed-in user. */
  shared(shareId: string): Promise<RawJson>;
}

const renderRow = (row: WishlistRow): RawJson =>
  renderWishlist(row.content, { shareId: row.share_id, userId: row.user_id, wishlistId: row.wishlist_id });

export function createWishlistService(store: Store): WishlistService {
  const { db } = store;
  const missing = (id: string): AppError => notFound(`wishlist ${id}`);

  return {
    async create(userId, body) {
      const content = JSON.stringify(body.content);
      const ids = { shareId: newUrlSafeId(), userId, wishlistId: newUrlSafeId() };
      const json = renderWishlist(content, ids);
      checkWishlistSize(json);
      // Count and insert under the user's lock: the limit holds under concurrent creates.
      await inUnitOfWork(store, [userLock(userId)], async (trx) => {
        checkWishlistLimit(await repo.countByUser(trx, userId));
        const at = now();
        await repo.insertWishlist(trx, {
          wishlist_id: ids.wishlistId,
          share_id: ids.shareId,
          user_id: userId,
          content,
          created_at: at,
          updated_at: at,
        });
      });
      return json;
    },

    async update(userId, wishlistId, body) {
      const current = await repo.findOwned(db, userId, wishlistId);
      if (!current) throw missing(wishlistId);
      const content = JSON.stringify(body.content);
      const json = renderWishlist(content, { shareId: current.share_id, userId, wishlistId });
      checkWishlistSize(json);
      if (!(await repo.updateContent(db, userId, wishlistId, content, now()))) throw missing(wishlistId);
      return json;
    },

    async list(userId) {
      return wrapRaw('wishlists', rawArray((await repo.listByUser(db, userId)).map(renderRow)));
    },

    async get(userId, wishlistId) {
      const row = await repo.findOwned(db, userId, wishlistId);
      if (!row) throw missing(wishlistId);
      return renderRow(row);
    },

    async remove(userId, wishlistId) {
      if (!(await repo.deleteOwned(db, userId, wishlistId))) throw missing(wishlistId);
    },

    async shared(shareId) {
      const row = await repo.findByShareId(db, shareId);
      if (!row) throw notFound(`shared wishlist ${shareId}`);
      return renderRow(row);
    },
  };
}
