import type { Store } from '../../db/dialect.js';
import type { MediaStore } from '../../media-store/media-store.js';
import {
  allFamilyImages,
  allGroupImages,
  allIconMedia,
  allObjects,
  allTranscodeLinks,
  cardDocsAfter,
  deleteExpiredUploadUrls,
  deleteObjectRows,
  wishlistContentsAfter,
} from './repository.js';

/** Any SHA-256 in a stored document: a media reference, a cover's mediaUrl, an icon's id. */
const HASH_IN_TEXT = /[0-9a-f]{64}/g;
const PAGE = 1000;

export interface GcReport {
  /** Objects (recorded or not) that nothing references and that are older than the grace period. */
  removed: { sha256: string; size: number }[];
  bytes: number;
  staging: number;
  dryRun: boolean;
}

/**
 * Removes stored media nothing uses any more: objects no card, wishlist, group, display icon or
 * family image names, which are not the source of a transcode something names, and which were
 * stored before the grace period (uploads in progress and cards still to be written keep
 * theirs). Files no row names (a crash between the two writes) and staging leftovers go too.
 * With `dryRun`, reports what it would remove and removes nothing.
 */
export async function collectMediaGarbage(
  store: Store,
  mediaStore: MediaStore,
  opts: { graceMs: number; dryRun: boolean; nowMs?: number },
): Promise<GcReport> {
  const { db } = store;
  const cutoffMs = (opts.nowMs ?? Date.now()) - opts.graceMs;
  const cutoff = new Date(cutoffMs).toISOString();
  const used = new Set<string>();
  const note = (text: string | null | undefined): void => {
    for (const match of text?.match(HASH_IN_TEXT) ?? []) used.add(match);
  };

  // Documents, page by page (a large database is not read whole).
  for (let after = ''; ; ) {
    const rows = await cardDocsAfter(db, after, PAGE);
    for (const row of rows) note(row.doc);
    if (rows.length < PAGE) break;
    after = rows.at(-1)!.card_id;
  }
  for (let after = ''; ; ) {
    const rows = await wishlistContentsAfter(db, after, PAGE);
    for (const row of rows) note(row.content);
    if (rows.length < PAGE) break;
    after = rows.at(-1)!.wishlist_id;
  }
  for (const imageId of await allGroupImages(db)) note(imageId);
  for (const mediaId of await allIconMedia(db)) used.add(mediaId);
  for (const imageId of await allFamilyImages(db)) used.add(imageId);
  // A transcode's source stays while its output is used (a normalised variant is made from it).
  for (const row of await allTranscodeLinks(db)) {
    const pending = row.status === 'queued' || row.status === 'running';
    if (pending || (row.transcoded_sha256 && used.has(row.transcoded_sha256))) used.add(row.source_sha256);
  }

  const removed: { sha256: string; size: number }[] = [];
  const recorded = new Set<string>();
  const objects = await allObjects(db);
  for (const object of objects) {
    recorded.add(object.sha256);
    if (used.has(object.sha256) || object.created_at >= cutoff) continue;
    removed.push({ sha256: object.sha256, size: Number(object.size) });
  }
  for await (const file of mediaStore.list()) {
    if (!recorded.has(file.sha256) && !used.has(file.sha256) && file.storedAtMs < cutoffMs) {
      removed.push({ sha256: file.sha256, size: (await mediaStore.stat(file.sha256))?.size ?? 0 });
    }
  }

  let staging = 0;
  if (!opts.dryRun) {
    for (const { sha256 } of removed) {
      // Rows first: a crash midway leaves a file no row names, which the next run removes.
      await db.transaction().execute((trx) => deleteObjectRows(trx, sha256));
      await mediaStore.remove(sha256);
    }
    staging = await mediaStore.sweepStaging(cutoffMs);
    // Upload URLs handed out and never used, long expired.
    await deleteExpiredUploadUrls(db, cutoff);
  }
  return { removed, bytes: removed.reduce((n, r) => n + r.size, 0), staging, dryRun: opts.dryRun };
}
