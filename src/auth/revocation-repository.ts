import type { Store, StoreDialect } from '../db/dialect.js';
import type { Db, Trx } from '../db/unit-of-work.js';

/** The SQL of `token_revocations` (migration 011): what src/auth/revocations.ts mirrors. */

export type RevocationKind = 'grant' | 'token' | 'account';

export interface Revocation {
  kind: RevocationKind;
  /** The grant id, the token's `jti`, or the user id. */
  subject: string;
  /** Epoch ms. For an account: its tokens issued before this second are refused. */
  revokedAt: number;
  /** Epoch ms after which every token the row covers has expired; undefined: kept. */
  expiresAt: number | undefined;
}

export interface StoredRevocation extends Revocation {
  id: number;
}

/** Orders the writers, so that ids are given in the order the rows commit (see `revocationsAfter`). */
const ORDER_LOCK = 'tokens:revocations';

/**
 * Writes revocations in the caller's transaction, as its last statements (the ordering lock is
 * held until commit; taken last, it closes no cycle of waits). An account's newer row replaces
 * its older ones: it covers every token they did.
 */
export async function recordRevocations(trx: Trx, dialect: StoreDialect, rows: readonly Revocation[]): Promise<void> {
  if (rows.length === 0) return;
  await dialect.lockKey(trx, ORDER_LOCK);
  const accounts = rows.filter((r) => r.kind === 'account').map((r) => r.subject);
  if (accounts.length > 0) await trx.deleteFrom('token_revocations').where('kind', '=', 'account').where('subject', 'in', accounts).execute();
  await trx
    .insertInto('token_revocations')
    .values(
      rows.map((r) => ({
        kind: r.kind,
        subject: r.subject,
        revoked_at: new Date(r.revokedAt).toISOString(),
        expires_at: r.expiresAt === undefined ? null : new Date(r.expiresAt).toISOString(),
      })),
    )
    .execute();
}

/** `recordRevocations` in a transaction of its own. */
export async function recordRevocationsNow(store: Store, rows: readonly Revocation[]): Promise<void> {
  await store.db.transaction().execute((trx) => recordRevocations(trx, store.dialect, rows));
}

/**
 * The rows after `afterId` that still matter, in id order, at most `limit`. Writers take one lock
 * before they insert and hold it to their commit, so ids are visible in order: a reader that saw
 * id n has seen every row below it (a gap is a rolled-back write).
 */
export async function revocationsAfter(db: Db, afterId: number, limit: number, now = Date.now()): Promise<StoredRevocation[]> {
  const rows = await db
    .selectFrom('token_revocations')
    .selectAll()
    .where('id', '>', afterId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', new Date(now).toISOString())]))
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    kind: r.kind,
    subject: r.subject,
    revokedAt: Date.parse(r.revoked_at),
    expiresAt: r.expires_at === null ? undefined : Date.parse(r.expires_at),
  }));
}

/** Removes the rows whose tokens have all expired; returns how many. */
export async function sweepRevocations(db: Db, now = Date.now()): Promise<number> {
  const result = await db.deleteFrom('token_revocations').where('expires_at', '<', new Date(now).toISOString()).executeTakeFirst();
  return Number(result.numDeletedRows);
}
