import type { MediaHoldingsTable } from '../../db/database.js';
import type { Store } from '../../db/dialect.js';
import type { MediaStore, StagedObject } from '../../media-store/media-store.js';
import { now } from '../../shared/clock.js';
import { AppError } from '../../shared/errors.js';
import * as repo from './repository.js';

type Kind = MediaHoldingsTable['kind'];

/**
 * Stored objects and their holders: the one place where bytes become held by an owner, and
 * where the per-owner quota is enforced (under the owner's lock, so that concurrent uploads
 * cannot together pass it).
 */
export interface MediaObjects {
  /**
   * Commits `staged` to the media store and records `ownerId` as holding it as `kind`. Beyond the
   * quota: 413, and the staged bytes are dropped.
   */
  keep(ownerId: string, kind: Kind, staged: StagedObject, contentType: string): Promise<void>;
  /** Records `ownerId` as holding an object already stored (a deduplicated upload), within the quota. */
  hold(ownerId: string, kind: Kind, sha256: string): Promise<void>;
  /**
   * Whether any of `ownerIds` could hold an object of `size` bytes as `kind` within the quota
   * (or holds it already): a transcode is stored only then.
   */
  someoneHasRoom(ownerIds: string[], kind: Kind, sha256: string, size: number): Promise<boolean>;
  /** The bytes `ownerId` may still add within the quota now (an upload stops at it while streaming). */
  room(ownerId: string): Promise<number>;
  /** Records an object produced by the server itself (a transcode), held by nobody yet. */
  record(staged: StagedObject, contentType: string): Promise<void>;
}

export function createMediaObjects(store: Store, mediaStore: MediaStore, quotaBytes: number): MediaObjects {
  const { db, dialect } = store;

  async function withinQuota(
    ownerId: string,
    kind: Kind,
    sha256: string,
    size: number,
    write: (trx: Parameters<typeof repo.bytesHeld>[0]) => Promise<void>,
  ): Promise<void> {
    await db.transaction().execute(async (trx) => {
      await dialect.lockKey(trx, `media-quota:${ownerId}`);
      if (!(await repo.holds(trx, ownerId, sha256, kind))) {
        const used = await repo.bytesHeld(trx, ownerId);
        if (used + size > quotaBytes) {
          throw new AppError(
            'payload-too-large',
            `this upload (${size} bytes) would exceed your media quota (${used} of ${quotaBytes} bytes used)`,
          );
        }
      }
      await write(trx);
      await repo.insertHolding(trx, { owner_id: ownerId, sha256, kind, size, created_at: now() });
    });
  }

  return {
    async keep(ownerId, kind, staged, contentType) {
      try {
        await withinQuota(ownerId, kind, staged.sha256, staged.size, async (trx) => {
          // The bytes are in place before the row that says so commits; a failure in between
          // leaves an object no row names, which garbage collection removes.
          await staged.commit();
          await repo.insertObject(trx, staged.sha256, staged.size, contentType, now());
        });
      } finally {
        await staged.discard();
      }
    },

    async hold(ownerId, kind, sha256) {
      const object = await repo.findObject(db, sha256);
      if (!object) throw new Error(`object ${sha256} is not stored`);
      await withinQuota(ownerId, kind, sha256, object.size, async () => {});
    },

    async someoneHasRoom(ownerIds, kind, sha256, size) {
      for (const ownerId of ownerIds) {
        if (await repo.holds(db, ownerId, sha256, kind)) return true;
        if ((await repo.bytesHeld(db, ownerId)) + size <= quotaBytes) return true;
      }
      return false;
    },

    async room(ownerId) {
      return Math.max(0, quotaBytes - (await repo.bytesHeld(db, ownerId)));
    },

    async record(staged, contentType) {
      try {
        await staged.commit();
        await repo.insertObject(db, staged.sha256, staged.size, contentType, now());
      } finally {
        await staged.discard();
      }
    },
  };
}

/** Whether `sha256` names an object that is both recorded and present in the media store. */
export async function isStored(store: Store, mediaStore: MediaStore, sha256: string): Promise<boolean> {
  return (await repo.findObject(store.db, sha256)) !== undefined && (await mediaStore.stat(sha256)) !== undefined;
}
