import { sql, type Kysely, type Transaction } from 'kysely';
import type {
  AudioUploadRow,
  Database,
  DisplayIconRow,
  FamilyImageRow,
  MediaHoldingsTable,
  MediaObjectsTable,
  TranscodeRow,
} from '../../db/database.js';
import type { StoreDialect } from '../../db/dialect.js';
import type { Selectable } from 'kysely';
import { queuedTranscode } from './queries.js';

type Db = Kysely<Database> | Transaction<Database>;
type MediaObjectRow = Selectable<MediaObjectsTable>;

// ---- stored objects and their holders ----

export async function findObject(
  db: Db,
  sha256: string,
): Promise<{ sha256: string; size: number; content_type: string } | undefined> {
  const row = await db.selectFrom('media_objects').selectAll().where('sha256', '=', sha256).executeTakeFirst();
  return row && { sha256: row.sha256, size: Number(row.size), content_type: row.content_type };
}

export async function insertObject(db: Db, sha256: string, size: number, contentType: string, at: string): Promise<void> {
  await db
    .insertInto('media_objects')
    .values({ sha256, size, content_type: contentType, created_at: at })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .execute();
}

/** Bytes an owner holds: each object once per kind it is held as. */
export async function bytesHeld(db: Db, ownerId: string): Promise<number> {
  const row = await db
    .selectFrom('media_holdings')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('size'), sql<number>`0`).as('total'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

export async function holds(db: Db, ownerId: string, sha256: string, kind: MediaHoldingsTable['kind']): Promise<boolean> {
  const row = await db
    .selectFrom('media_holdings')
    .select('sha256')
    .where('owner_id', '=', ownerId)
    .where('sha256', '=', sha256)
    .where('kind', '=', kind)
    .executeTakeFirst();
  return row !== undefined;
}

/** True when anyone holds the object as this kind. */
export async function heldAs(db: Db, sha256: string, kinds: readonly MediaHoldingsTable['kind'][]): Promise<boolean> {
  const row = await db
    .selectFrom('media_holdings')
    .select('sha256')
    .where('sha256', '=', sha256)
    .where('kind', 'in', kinds)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertHolding(
  db: Db,
  row: { owner_id: string; sha256: string; kind: MediaHoldingsTable['kind']; size: number; created_at: string },
): Promise<void> {
  await db
    .insertInto('media_holdings')
    .values(row)
    .onConflict((oc) => oc.columns(['owner_id', 'sha256', 'kind']).doNothing())
    .execute();
}

// ---- audio uploads ----

export async function insertUpload(db: Db, row: AudioUploadRow): Promise<void> {
  await db.insertInto('audio_uploads').values(row).execute();
}

export async function findUpload(db: Db, uploadId: string): Promise<AudioUploadRow | undefined> {
  return db.selectFrom('audio_uploads').selectAll().where('upload_id', '=', uploadId).executeTakeFirst();
}

/** The users who uploaded `sourceSha256` (whose bytes arrived): those a transcode of it is for. */
export async function uploaders(db: Db, sourceSha256: string): Promise<string[]> {
  const rows = await db
    .selectFrom('audio_uploads')
    .select('user_id')
    .distinct()
    .where('source_sha256', '=', sourceSha256)
    .where('state', '=', 'received')
    .execute();
  return rows.map((r) => r.user_id);
}

/** The received uploads of a source, with their users: whom its transcode concerns. */
export async function uploadsOfSource(db: Db, sourceSha256: string): Promise<{ uploadId: string; userId: string }[]> {
  const rows = await db
    .selectFrom('audio_uploads')
    .select(['upload_id', 'user_id'])
    .where('source_sha256', '=', sourceSha256)
    .where('state', '=', 'received')
    .orderBy('upload_id')
    .execute();
  return rows.map((r) => ({ uploadId: r.upload_id, userId: r.user_id }));
}

/** Moves an upload from one state to another; false when it was not in `from` (a race lost). */
export async function moveUpload(
  db: Db,
  uploadId: string,
  from: AudioUploadRow['state'],
  to: AudioUploadRow['state'],
  at: string,
  sourceSha256?: string,
): Promise<boolean> {
  const result = await db
    .updateTable('audio_uploads')
    .set({ state: to, updated_at: at, ...(sourceSha256 ? { source_sha256: sourceSha256 } : {}) })
    .where('upload_id', '=', uploadId)
    .where('state', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// ---- transcodes (the persisted job queue) ----

export async function findTranscode(db: Db, sourceSha256: string, loudnorm: boolean): Promise<TranscodeRow | undefined> {
  return db
    .selectFrom('transcodes')
    .selectAll()
    .where('source_sha256', '=', sourceSha256)
    .where('loudnorm', '=', loudnorm ? 1 : 0)
    .executeTakeFirst();
}

/** The finished transcode whose output is `transcodedSha256`, if any. */
export async function findTranscodeByOutput(db: Db, transcodedSha256: string): Promise<TranscodeRow | undefined> {
  return db
    .selectFrom('transcodes')
    .selectAll()
    .where('transcoded_sha256', '=', transcodedSha256)
    .where('status', '=', 'done')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Queues a transcode unless one of that source and setting exists; with `retryFailed`, one that
 * failed is queued again (its source was uploaded anew: the failure may have been the quota of
 * whoever uploaded it before, and a file refused for good is refused again at once).
 */
export async function queueTranscode(db: Db, sourceSha256: string, loudnorm: boolean, at: string, retryFailed = false): Promise<void> {
  await db
    .insertInto('transcodes')
    .values(queuedTranscode(sourceSha256, loudnorm ? 1 : 0, at))
    .onConflict((oc) =>
      retryFailed
        ? oc
            .columns(['source_sha256', 'loudnorm'])
            .doUpdateSet({ status: 'queued', attempts: 0, progress: 0, error: null, lease_until: null, updated_at: at })
            .where('transcodes.status', '=', 'failed')
        : oc.columns(['source_sha256', 'loudnorm']).doNothing(),
    )
    .execute();
}

/**
 * Claims a job that is queued, or running under a lease that lapsed (its worker died), in one
 * statement. Users take turns, across every instance sharing the database: the job claimed is
 * that of the user (among those who uploaded its source) with the fewest jobs running now, then
 * the one served longest ago (their latest job claimed or finished), then the oldest. So one
 * user's queue of long files cannot hold anyone else's: the next free worker takes another
 * user's job. On PostgreSQL the candidate row is locked with SKIP LOCKED, so instances
 * claiming at once take different jobs; on SQLite the statement holds the database's write lock.
 * `attempts` is raised: it is the claim's token, which later writes by this worker must match.
 */
export async function claimTranscode(
  db: Db,
  dialect: StoreDialect,
  now: string,
  leaseUntil: string,
): Promise<TranscodeRow | undefined> {
  const claimable = sql`(c.status = 'queued' or (c.status = 'running' and c.lease_until < ${now}))`;
  // Looked for first with a read, as links' claimJob: an idle poll then writes nothing.
  const found = await sql<{ one: number }>`select 1 as one from transcodes c where ${claimable} limit 1`.execute(db);
  if (found.rows.length === 0) return undefined;
  const lock = dialect.skipLocked ? sql` for update skip locked` : sql``;
  // A running job j is user u's when u uploaded its source.
  const usersJob = sql`exists (select 1 from audio_uploads mine
                                where mine.source_sha256 = j.source_sha256 and mine.user_id = u.user_id and mine.state = 'received')`;
  const result = await sql<TranscodeRow>`
    update transcodes
       set status = 'running', attempts = attempts + 1, lease_until = ${leaseUntil}, updated_at = ${now}
     where (source_sha256, loudnorm) = (
       select c.source_sha256, c.loudnorm from transcodes c
        where ${claimable}
        order by
          coalesce((select min((select count(*) from transcodes j
                                 where j.status = 'running' and j.lease_until >= ${now} and ${usersJob}))
                      from audio_uploads u where u.source_sha256 = c.source_sha256 and u.state = 'received'), 0),
          coalesce((select min((select max(j.updated_at) from audio_uploads mine
                                  join transcodes j on j.source_sha256 = mine.source_sha256
                                 where mine.user_id = u.user_id and mine.state = 'received' and j.status <> 'queued'))
                      from audio_uploads u where u.source_sha256 = c.source_sha256 and u.state = 'received'), ''),
          c.created_at, c.source_sha256
        limit 1${lock})
    returning *`.execute(db);
  return result.rows[0];
}

type JobKey = Pick<TranscodeRow, 'source_sha256' | 'loudnorm' | 'attempts'>;

/** Updates the claimed job `job` while its claim holds; false once another worker took it over. */
export async function updateClaimedTranscode(
  db: Db,
  job: JobKey,
  values: Partial<Pick<TranscodeRow, 'status' | 'lease_until' | 'progress' | 'transcoded_sha256' | 'transcoded_info' | 'error' | 'updated_at'>>,
): Promise<boolean> {
  const result = await db
    .updateTable('transcodes')
    .set(values)
    .where('source_sha256', '=', job.source_sha256)
    .where('loudnorm', '=', job.loudnorm)
    .where('attempts', '=', job.attempts)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// ---- display icons ----

export async function listIcons(db: Db, userId: string): Promise<DisplayIconRow[]> {
  return db
    .selectFrom('display_icons')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('display_icon_id')
    .execute();
}

export async function findIconByMedia(db: Db, userId: string, mediaId: string): Promise<DisplayIconRow | undefined> {
  return db
    .selectFrom('display_icons')
    .selectAll()
    .where('user_id', '=', userId)
    .where('media_id', '=', mediaId)
    .executeTakeFirst();
}

export async function insertIcon(db: Db, row: DisplayIconRow): Promise<boolean> {
  const result = await db
    .insertInto('display_icons')
    .values(row)
    .onConflict((oc) => oc.columns(['user_id', 'media_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function updateIcon(db: Db, userId: string, mediaId: string, title: string | null, tags: string): Promise<void> {
  await db
    .updateTable('display_icons')
    .set({ title, public_tags: tags })
    .where('user_id', '=', userId)
    .where('media_id', '=', mediaId)
    .execute();
}

// ---- family images ----

export async function listFamilyImages(db: Db, familyId: string, limit: number | undefined): Promise<FamilyImageRow[]> {
  let q = db
    .selectFrom('family_images')
    .selectAll()
    .where('family_id', '=', familyId)
    .orderBy('created_at')
    .orderBy('image_id');
  if (limit !== undefined) q = q.limit(limit);
  return q.execute();
}

export async function countFamilyImages(db: Db, familyId: string): Promise<number> {
  const row = await db
    .selectFrom('family_images')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('family_id', '=', familyId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findFamilyImage(db: Db, familyId: string, imageId: string): Promise<FamilyImageRow | undefined> {
  return db
    .selectFrom('family_images')
    .selectAll()
    .where('family_id', '=', familyId)
    .where('image_id', '=', imageId)
    .executeTakeFirst();
}

export async function insertFamilyImage(db: Db, row: FamilyImageRow): Promise<void> {
  await db
    .insertInto('family_images')
    .values(row)
    .onConflict((oc) => oc.columns(['family_id', 'image_id']).doNothing())
    .execute();
}

// ---- garbage collection (gc.ts): every row that names stored media, read whole or page by page ----

/** A page of cards' documents in id order, after the id `after`. */
export async function cardDocsAfter(db: Db, after: string, limit: number): Promise<{ card_id: string; doc: string }[]> {
  return db.selectFrom('cards').select(['card_id', 'doc']).where('card_id', '>', after).orderBy('card_id').limit(limit).execute();
}

/** A page of wishlists' contents in id order, after the id `after`. */
export async function wishlistContentsAfter(db: Db, after: string, limit: number): Promise<{ wishlist_id: string; content: string }[]> {
  return db.selectFrom('wishlists').select(['wishlist_id', 'content']).where('wishlist_id', '>', after).orderBy('wishlist_id').limit(limit).execute();
}

export async function allGroupImages(db: Db): Promise<string[]> {
  return (await db.selectFrom('library_groups').select('image_id').execute()).map((row) => row.image_id);
}

export async function allIconMedia(db: Db): Promise<string[]> {
  return (await db.selectFrom('display_icons').select('media_id').execute()).map((row) => row.media_id);
}

export async function allFamilyImages(db: Db): Promise<string[]> {
  return (await db.selectFrom('family_images').select('image_id').execute()).map((row) => row.image_id);
}

export async function allTranscodeLinks(db: Db): Promise<Pick<TranscodeRow, 'source_sha256' | 'transcoded_sha256' | 'status'>[]> {
  return db.selectFrom('transcodes').select(['source_sha256', 'transcoded_sha256', 'status']).execute();
}

export async function allObjects(db: Db): Promise<Pick<MediaObjectRow, 'sha256' | 'size' | 'created_at'>[]> {
  return db.selectFrom('media_objects').select(['sha256', 'size', 'created_at']).execute();
}

/** Deletes an object's rows: its holdings, the transcodes it is the source or output of, its uploads, the object (in the caller's transaction). */
export async function deleteObjectRows(trx: Db, sha256: string): Promise<void> {
  await trx.deleteFrom('media_holdings').where('sha256', '=', sha256).execute();
  await trx
    .deleteFrom('transcodes')
    .where((eb) => eb.or([eb('source_sha256', '=', sha256), eb('transcoded_sha256', '=', sha256)]))
    .execute();
  await trx.deleteFrom('audio_uploads').where('source_sha256', '=', sha256).execute();
  await trx.deleteFrom('media_objects').where('sha256', '=', sha256).execute();
}

/** Deletes the uploads still awaiting their bytes whose URL expired before `cutoff` (ISO time). */
export async function deleteExpiredUploadUrls(db: Db, cutoff: string): Promise<void> {
  await db.deleteFrom('audio_uploads').where('state', '=', 'awaiting').where('url_expires_at', '<', cutoff).execute();
}
