import { sql } from 'kysely';
import type { Db } from '../../db/unit-of-work.js';
import { FAMILY_OWNER_PREFIX, PUBLIC_KINDS } from './ownership.js';

/** Queries of this module that other parts of the app build on (the metrics, signing, export). */

/** How many transcode jobs wait and run now, across every instance (the queue is the table). */
export async function transcodeQueueDepth(db: Db): Promise<{ queued: number; running: number }> {
  const rows = await db
    .selectFrom('transcodes')
    .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('status', 'in', ['queued', 'running'])
    .groupBy('status')
    .execute();
  const depth = { queued: 0, running: 0 };
  for (const row of rows) depth[row.status as 'queued' | 'running'] = Number(row.n);
  return depth;
}

/** Objects in one `in (...)` list: far below SQLite's bound on parameters. */
const HASH_CHUNK = 500;

/** What the holdings say about who may read one stored object (read-rights.ts applies it). */
export interface ObjectReaders {
  /** Held as a cover or a display icon, by anyone: `/media/public/{id}` serves it to everyone. */
  public: boolean;
  /** Those of the users asked about who hold it, themselves or through their family (its images). */
  holders: Set<string>;
}

/**
 * For each of `hashes` that is held by one of `users` (or by the family of one of them) or held
 * publicly: who of `users` holds it, and whether it is public. Hashes that none of them holds
 * and that are not public are left out. A family's owner id (ownership.ts) may stand among
 * `users` for the family itself. One query for up to 500 hashes.
 */
export async function readersAmong(db: Db, hashes: Iterable<string>, users: readonly string[]): Promise<Map<string, ObjectReaders>> {
  const found = new Map<string, ObjectReaders>();
  const all = [...new Set(hashes)];
  // `in ()` is no SQL: a user id that cannot be one stands for nobody.
  const who = users.length > 0 ? users : [''];
  for (let i = 0; i < all.length; i += HASH_CHUNK) {
    const chunk = all.slice(i, i + HASH_CHUNK);
    const direct = db
      .selectFrom('media_holdings as h')
      .select(['h.sha256', 'h.owner_id as holder', 'h.kind'])
      .where('h.sha256', 'in', chunk)
      .where((eb) => eb.or([eb('h.owner_id', 'in', who), eb('h.kind', 'in', PUBLIC_KINDS)]));
    const throughFamily = db
      .selectFrom('media_holdings as h')
      .innerJoin('family_memberships as m', (join) =>
        join.on(sql<boolean>`h.owner_id = ${sql.lit(FAMILY_OWNER_PREFIX)} || m.family_id`),
      )
      .select(['h.sha256', 'm.user_id as holder', 'h.kind'])
      .where('h.sha256', 'in', chunk)
      .where('m.user_id', 'in', who);
    for (const row of await direct.unionAll(throughFamily).execute()) {
      let readers = found.get(row.sha256);
      if (!readers) found.set(row.sha256, (readers = { public: false, holders: new Set() }));
      if (PUBLIC_KINDS.includes(row.kind)) readers.public = true;
      if (users.includes(row.holder)) readers.holders.add(row.holder);
    }
  }
  return found;
}

/** A transcode job of `sourceSha256` as it starts: queued, never tried, with no output (`loudnorm` as stored, 0 or 1). */
export function queuedTranscode(sourceSha256: string, loudnorm: number, at: string) {
  return {
    source_sha256: sourceSha256,
    loudnorm,
    status: 'queued' as const,
    attempts: 0,
    lease_until: null,
    progress: 0,
    transcoded_sha256: null,
    transcoded_info: null,
    error: null,
    created_at: at,
    updated_at: at,
  };
}
