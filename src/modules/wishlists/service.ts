import type { WishlistRow } from '../../db/database.js';
import { bumpCounters, readCounters, scopes } from '../../db/change-counters.js';
import type { Store } from '../../db/dialect.js';
import { requireMatch, type Precondition, type Tagger } from '../../shared/entity-tag.js';
import { inUnitOfWork, userLock, type CommitStep, type Trx } from '../../db/unit-of-work.js';
import { now } from '../../shared/clock.js';
import { AppError, notFound } from '../../shared/errors.js';
import { newUrlSafeId } from '../../shared/ids.js';
import { rawArray, wrapRaw, type RawJson } from '../../shared/raw-json.js';
import { publish } from '../events/publish.js';
import * as repo from './repository.js';
import { type WishlistFields, checkWishlistLimit, checkWishlistSize, labelsAfter, labelsOf, renderWishlist } from './rules.js';
import type { WishlistBody } from './schemas.js';

/** A wishlist answer (raw: references as stored) and its entity tag. */
export interface TaggedWishlist {
  wishlist: RawJson;
  tag: string;
}

export interface WishlistService {
  /** `alsoCommit` commits with the create (unit-of-work.ts). */
  create(userId: string, body: WishlistBody, alsoCommit?: CommitStep<TaggedWishlist>): Promise<TaggedWishlist>;
  /** With a precondition (`If-Match`) that no longer holds, changes nothing (412). */
  update(userId: string, wishlistId: string, body: WishlistBody, precondition?: Precondition): Promise<TaggedWishlist>;
  /** The entity tag of `list` (from the user's wishlists counter). */
  listTag(userId: string): Promise<string>;
  list(userId: string): Promise<RawJson>;
  /** The entity tags of `get` and `shared` (the wishlist's version alone); 404 like them. */
  tag(userId: string, wishlistId: string): Promise<string>;
  sharedTag(shareId: string): Promise<string>;
  get(userId: string, wishlistId: string): Promise<RawJson>;
  remove(userId: string, wishlistId: string): Promise<void>;
  /** A wishlist by its share id, with its owner's display name, for any signed-in user. */
  shared(shareId: string): Promise<RawJson>;
}

const fieldsOf = (row: WishlistRow): WishlistFields => ({ ...labelsOf(row), shareId: row.share_id, userId: row.user_id, wishlistId: row.wishlist_id });
const renderRow = (row: WishlistRow): RawJson => renderWishlist(row.content, fieldsOf(row));

export function createWishlistService(store: Store, tagger: Tagger): WishlistService {
  const { db } = store;
  const missing = (id: string): AppError => notFound(`wishlist ${id}`);
  /** One wishlist's answer (by its id or its share id) is its row alone. */
  const wishlistTag = (wishlistId: string, version: number): string => tagger.tag(['wishlist', wishlistId, version]);
  /** The caller's list (`GET /wishlists`) shows the counter of their wishlists. */
  const listTagOf = (userId: string, version: number): string => tagger.tag(['wishlists', userId, version]);

  /**
   * The last statements of a wishlist write (`written`, just sent): the owner's list counter
   * bumped, and the live event,
   * to the owner alone, naming the list's new tag (as `format=raw` answers it; other formats sign
   * media URLs for the reader and add to the tag), which the bump gives.
   */
  async function recordChange<W>(
    trx: Trx,
    written: Promise<W>,
    kind: 'wishlist.created' | 'wishlist.changed' | 'wishlist.deleted',
    userId: string,
    wishlistId: string,
  ): Promise<W> {
    const scope = scopes.wishlists(userId);
    // The bump goes out with the write it follows; the event, with the commit.
    const [result, bumped] = await Promise.all([written, bumpCounters(trx, [scope])]);
    const version = bumped.get(scope) ?? 0;
    await publish(trx, store.dialect, {
      kind,
      audience: { userId },
      ids: { wishlistId },
      read: '/wishlists',
      tag: listTagOf(userId, version),
    });
    return result;
  }

  return {
    async create(userId, body, alsoCommit) {
      const content = JSON.stringify(body.content);
      const labels = labelsAfter(body);
      const ids = { shareId: newUrlSafeId(), userId, wishlistId: newUrlSafeId() };
      const json = renderWishlist(content, { ...ids, ...labels });
      checkWishlistSize(json);
      // Count and insert under the user's lock: the limit holds under concurrent creates.
      return inUnitOfWork(
        store,
        [userLock(userId)],
        async (trx) => {
          checkWishlistLimit(await repo.countByUser(trx, userId));
          const at = now();
          const inserted = repo.insertWishlist(trx, {
            wishlist_id: ids.wishlistId,
            share_id: ids.shareId,
            user_id: userId,
            content,
            ...labels,
            created_at: at,
            updated_at: at,
          });
          await recordChange(trx, inserted, 'wishlist.created', userId, ids.wishlistId);
          return { wishlist: json, tag: wishlistTag(ids.wishlistId, 1) };
        },
        alsoCommit,
      );
    },

    async update(userId, wishlistId, body, precondition) {
      const content = JSON.stringify(body.content);
      // Under the owner's lock, so that no other write comes between the If-Match check and this one.
      return inUnitOfWork(store, [userLock(userId)], async (trx) => {
        const current = await repo.findOwned(trx, userId, wishlistId);
        if (!current) throw missing(wishlistId);
        requireMatch(precondition, wishlistTag(wishlistId, current.version), `wishlist ${wishlistId}`);
        // A body without a label (as the interface's own bodies are) keeps what the wishlist has.
        const labels = labelsAfter(body, labelsOf(current));
        const json = renderWishlist(content, { ...fieldsOf(current), ...labels });
        checkWishlistSize(json);
        const version = await recordChange(trx, repo.updateWishlist(trx, userId, wishlistId, { content, ...labels }, now()), 'wishlist.changed', userId, wishlistId);
        if (version === undefined) throw missing(wishlistId);
        return { wishlist: json, tag: wishlistTag(wishlistId, version) };
      });
    },

    async listTag(userId) {
      const [version] = await readCounters(db, [scopes.wishlists(userId)]);
      return listTagOf(userId, version ?? 0);
    },

    async tag(userId, wishlistId) {
      const row = await repo.findOwnedVersion(db, userId, wishlistId);
      if (!row) throw missing(wishlistId);
      return wishlistTag(row.wishlist_id, row.version);
    },

    async sharedTag(shareId) {
      const row = await repo.findVersionByShareId(db, shareId);
      if (!row) throw notFound(`shared wishlist ${shareId}`);
      // The owner's name shows too: renamed, the view is another.
      return tagger.tag(['wishlist', row.wishlist_id, row.version, row.owner_name ?? '']);
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
      await inUnitOfWork(store, [], async (trx) => {
        // A wishlist not found rolls the bump and the event back with the rest.
        if (!(await recordChange(trx, repo.deleteOwned(trx, userId, wishlistId), 'wishlist.deleted', userId, wishlistId))) throw missing(wishlistId);
      });
    },

    async shared(shareId) {
      const row = await repo.findByShareId(db, shareId);
      if (!row) throw notFound(`shared wishlist ${shareId}`);
      return renderWishlist(row.content, { ...fieldsOf(row), ownerName: row.owner_name });
    },
  };
}
