import { sql } from 'kysely';
import type { LinkCardRow, LinkJobRow, LinkRow, LinksTable } from '../../db/database.js';
import type { StoreDialect } from '../../db/dialect.js';
import type { Db } from '../../db/unit-of-work.js';

/** The links module's SQL (migration 013). */

export async function insertLink(db: Db, row: LinkRow): Promise<void> {
  await db.insertInto('links').values(row).execute();
}

export async function findLink(db: Db, linkId: string): Promise<LinkRow | undefined> {
  return db.selectFrom('links').selectAll().where('link_id', '=', linkId).executeTakeFirst();
}

export async function listLinks(db: Db, userId: string): Promise<LinkRow[]> {
  return db.selectFrom('links').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('link_id').execute();
}

export async function countLinks(db: Db, userId: string): Promise<number> {
  const row = await db.selectFrom('links').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirst();
  return Number(row?.n ?? 0);
}

type LinkChange = Partial<Omit<LinksTable, 'link_id' | 'user_id' | 'created_at'>> & { updated_at: string };

export async function updateLink(db: Db, linkId: string, change: LinkChange): Promise<void> {
  await db.updateTable('links').set(change).where('link_id', '=', linkId).execute();
}

/** Moves a link on only if it is still in `state` (a poll racing an unlink or another poll). */
export async function updateLinkIf(db: Db, linkId: string, state: LinksTable['state'], change: LinkChange): Promise<boolean> {
  const result = await db.updateTable('links').set(change).where('link_id', '=', linkId).where('state', '=', state).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The link and what hangs from it, gone in one statement each (the caller's transaction). */
export async function deleteLink(db: Db, linkId: string): Promise<boolean> {
  await db.deleteFrom('link_jobs').where('link_id', '=', linkId).execute();
  await db.deleteFrom('link_cards').where('link_id', '=', linkId).execute();
  const result = await db.deleteFrom('links').where('link_id', '=', linkId).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** Sign-ins due for a poll. */
export async function duePolls(db: Db, at: string, limit: number): Promise<LinkRow[]> {
  return db
    .selectFrom('links')
    .selectAll()
    .where('state', '=', 'signing-in')
    .where('next_poll_at', '<=', at)
    .orderBy('next_poll_at')
    .limit(limit)
    .execute();
}

/**
 * Claims one poll: moves `next_poll_at` on from the value read. Only one instance's update
 * matches, so a code is never polled twice at once (which the remote would answer `slow_down`).
 */
export async function claimPoll(db: Db, linkId: string, seen: string, next: string): Promise<boolean> {
  const result = await db
    .updateTable('links')
    .set({ next_poll_at: next })
    .where('link_id', '=', linkId)
    .where('state', '=', 'signing-in')
    .where('next_poll_at', '=', seen)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function findCardByRemote(db: Db, linkId: string, remoteCardId: string): Promise<LinkCardRow | undefined> {
  return db.selectFrom('link_cards').selectAll().where('link_id', '=', linkId).where('remote_card_id', '=', remoteCardId).executeTakeFirst();
}

export async function findCardByLocal(db: Db, linkId: string, localCardId: string): Promise<LinkCardRow | undefined> {
  return db.selectFrom('link_cards').selectAll().where('link_id', '=', linkId).where('local_card_id', '=', localCardId).executeTakeFirst();
}

export async function listCardMaps(db: Db, linkId: string): Promise<LinkCardRow[]> {
  return db.selectFrom('link_cards').selectAll().where('link_id', '=', linkId).execute();
}

/** Records (or moves) the pairing of a remote and a local card after a copy. */
export async function saveCardMap(db: Db, row: LinkCardRow): Promise<void> {
  await db.deleteFrom('link_cards').where('link_id', '=', row.link_id).where('local_card_id', '=', row.local_card_id).where('remote_card_id', '<>', row.remote_card_id).execute();
  await db
    .insertInto('link_cards')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['link_id', 'remote_card_id']).doUpdateSet({
        local_card_id: row.local_card_id,
        remote_fingerprint: row.remote_fingerprint,
        local_version: row.local_version,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

export async function insertJob(db: Db, row: LinkJobRow): Promise<void> {
  await db.insertInto('link_jobs').values(row).execute();
}

export async function findJob(db: Db, jobId: string): Promise<LinkJobRow | undefined> {
  return db.selectFrom('link_jobs').selectAll().where('job_id', '=', jobId).executeTakeFirst();
}

export async function listJobs(db: Db, linkId: string, limit: number): Promise<LinkJobRow[]> {
  return db.selectFrom('link_jobs').selectAll().where('link_id', '=', linkId).orderBy('created_at', 'desc').orderBy('job_id', 'desc').limit(limit).execute();
}

/** Finished jobs of a link past the newest `keep`: the history stays bounded. */
export async function trimJobs(db: Db, linkId: string, keep: number): Promise<void> {
  const old = await db
    .selectFrom('link_jobs')
    .select('job_id')
    .where('link_id', '=', linkId)
    .where('state', 'in', ['done', 'failed'])
    .orderBy('created_at', 'desc')
    .orderBy('job_id', 'desc')
    .offset(keep)
    .limit(1000)
    .execute();
  if (old.length > 0) await db.deleteFrom('link_jobs').where('job_id', 'in', old.map((r) => r.job_id)).execute();
}

/**
 * Claims a queued job, or a running one whose lease lapsed (its instance died), in one
 * statement; `attempts` is raised and is the claim's token (as transcodes.claimTranscode).
 * With `only`, that job or none.
 */
export async function claimJob(db: Db, dialect: StoreDialect, at: string, leaseUntil: string, only?: string): Promise<LinkJobRow | undefined> {
  const which = only === undefined ? sql`` : sql` and c.job_id = ${only}`;
  const claimable = sql`(c.state = 'queued' or (c.state = 'running' and c.lease_until < ${at}))${which}`;
  // Looked for first with a read: an idle poll then writes nothing. On SQLite an update takes
  // the file's write lock even when it matches no row, and waits for it (blocking the process)
  // while another process holds it.
  const found = await sql<{ one: number }>`select 1 as one from link_jobs c where ${claimable} limit 1`.execute(db);
  if (found.rows.length === 0) return undefined;
  const lock = dialect.skipLocked ? sql` for update skip locked` : sql``;
  const result = await sql<LinkJobRow>`
    update link_jobs
       set state = 'running', attempts = attempts + 1, lease_until = ${leaseUntil}, updated_at = ${at}
     where job_id = (
       select c.job_id from link_jobs c
        where ${claimable}
        order by c.created_at, c.job_id
        limit 1${lock})
    returning *`.execute(db);
  return result.rows[0];
}

type JobChange = Partial<Pick<LinkJobRow, 'state' | 'cards' | 'files_done' | 'files_total' | 'bytes' | 'error' | 'lease_until'>> & { updated_at: string };

/** Updates a claimed job while the claim holds (`attempts` unchanged); false once another took it. */
export async function updateClaimedJob(db: Db, jobId: string, attempts: number, change: JobChange): Promise<boolean> {
  const result = await db
    .updateTable('link_jobs')
    .set(change)
    .where('job_id', '=', jobId)
    .where('attempts', '=', attempts)
    .where('state', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Puts a claimed job back in the queue (shutdown), if the claim still holds. */
export async function requeueJob(db: Db, jobId: string, attempts: number): Promise<void> {
  await db.updateTable('link_jobs').set({ state: 'queued', lease_until: null }).where('job_id', '=', jobId).where('attempts', '=', attempts).where('state', '=', 'running').execute();
}
