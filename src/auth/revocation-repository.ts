import type { Db } from '../db/unit-of-work.js';

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

/** Removes the account rows of these user ids. */
export async function deleteAccountRevocations(db: Db, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  await db.deleteFrom('token_revocations').where('kind', '=', 'account').where('subject', 'in', userIds).execute();
}

export async function insertRevocations(db: Db, rows: readonly Revocation[]): Promise<void> {
  if (rows.length === 0) return;
  await db
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

/**
 * The rows after `afterId` that still matter, in id order, at most `limit`. Writers take one lock
 * before they insert and hold it to their commit (revocations.ts, `recordRevocations`), so ids
 * are visible in order: a reader that saw
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
