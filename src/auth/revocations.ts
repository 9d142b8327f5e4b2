import type { Store, StoreDialect } from '../db/dialect.js';
import type { Trx } from '../db/unit-of-work.js';
import type { Principal } from './principal.js';
import { deleteAccountRevocations, insertRevocations, revocationsAfter, sweepRevocations, type Revocation } from './revocation-repository.js';
export type { Revocation };

/**
 * Revoked tokens, as every instance sees them (issue 33, row 4). Access tokens are JWTs checked
 * without the database; what ends them before their `exp` is a row of `token_revocations`
 * (src/auth/revocation-repository.ts): an engine grant revoked (an app signed out at /account or
 * by its refresh token at /oauth/revoke, a code replayed, a refresh token reused, a client
 * removed), one access token revoked at /oauth/revoke, or an account disabled or its password
 * reset (every token of its user id issued before that second). Each instance keeps the rows
 * that still matter in memory: all of them at start, then, every `pollMs`, only those with a
 * higher id than it read; a revocation made in this process applies here at once
 * (`announceRevocations`). The check a request pays is a few map lookups.
 */

/** The longest an access token of the embedded engine lives (ACCESS_TOKEN_TTL_SECONDS' maximum). */
export const LONGEST_ACCESS_TOKEN_SECONDS = 86_400;

/**
 * The claim naming an engine access token's grant (src/oauth/token-revocation.ts puts it there):
 * revoking the grant revokes the token.
 */
export const GRANT_CLAIM = 'cardshelf_grant';

export interface Revocations {
  /**
   * Whether a verified token is revoked: map lookups only, on every request (and for any other
   * check of a principal already verified, as a long-lived stream's). A plain function: it may be
   * passed on unbound.
   */
  isRevoked(principal: Principal): boolean;
  /** Stops the poll. */
  close(): void;
}

/** For tokens of an external issuer: nothing here revokes them. */
export const NO_REVOCATIONS: Revocations = { isRevoked: () => false, close: () => {} };

/** A revocation of an engine grant's access tokens, made now. */
export const grantRevocation = (grantId: string, now = Date.now()): Revocation => ({
  kind: 'grant',
  subject: grantId,
  revokedAt: now,
  expiresAt: now + LONGEST_ACCESS_TOKEN_SECONDS * 1000,
});

/** Every token of `userId` issued before now: kept, as tokens of `cardshelf token` may live any time. */
export const accountRevocation = (userId: string, now = Date.now()): Revocation => ({ kind: 'account', subject: userId, revokedAt: now, expiresAt: undefined });

/** One access token, by its `jti`, until its `exp` (ms). */
export const tokenRevocation = (tokenId: string, expiresAt: number, now = Date.now()): Revocation => ({ kind: 'token', subject: tokenId, revokedAt: now, expiresAt });

/** Orders the writers, so that ids are given in the order the rows commit (revocation-repository.ts, `revocationsAfter`). */
const ORDER_LOCK = 'tokens:revocations';

/**
 * Writes revocations in the caller's transaction, as its last statements (the ordering lock is
 * held until commit; taken last, it closes no cycle of waits). An account's newer row replaces
 * its older ones: it covers every token they did. Announce them after commit.
 */
export async function recordRevocations(trx: Trx, dialect: StoreDialect, rows: readonly Revocation[]): Promise<void> {
  if (rows.length === 0) return;
  await dialect.lockKey(trx, ORDER_LOCK);
  await deleteAccountRevocations(trx, rows.filter((r) => r.kind === 'account').map((r) => r.subject));
  await insertRevocations(trx, rows);
}

/** `recordRevocations` in a transaction of its own. */
export async function recordRevocationsNow(store: Store, rows: readonly Revocation[]): Promise<void> {
  await store.db.transaction().execute((trx) => recordRevocations(trx, store.dialect, rows));
}

type Listener = (rows: readonly Revocation[]) => void;
/** The lists of this process, by the store they read: a write through that store applies to them at once. */
const listeners = new WeakMap<Store, Set<Listener>>();

/** Applies committed revocations to this process's lists on `store` at once (other instances poll). */
export function announceRevocations(store: Store, rows: readonly Revocation[]): void {
  for (const listener of listeners.get(store) ?? []) listener(rows);
}

/** Rows read at once. */
const BATCH = 1000;
/** How often the database's expired rows are removed. */
const SWEEP_EVERY_MS = 10 * 60_000;

export async function createRevocations(
  store: Store,
  opts: { pollMs: number; log: { warn(obj: object, msg: string): void } },
): Promise<Revocations> {
  /** Grant ids and token ids, each until its `expiresAt` (ms). */
  const grants = new Map<string, number>();
  const tokens = new Map<string, number>();
  /** Per user id, the second before which its tokens are refused. */
  const notBefore = new Map<string, number>();
  let lastId = 0;
  let reading: Promise<void> | undefined;
  let lastSweep = Date.now();

  const apply = (rows: readonly Revocation[]): void => {
    for (const row of rows) {
      if (row.kind === 'account') {
        // `iat` is in whole seconds: a token of the same second is taken (its grant, if any, is revoked too).
        const second = Math.floor(row.revokedAt / 1000);
        notBefore.set(row.subject, Math.max(second, notBefore.get(row.subject) ?? 0));
      } else {
        const map = row.kind === 'grant' ? grants : tokens;
        const until = row.expiresAt ?? Infinity;
        map.set(row.subject, Math.max(until, map.get(row.subject) ?? 0));
      }
    }
  };

  const forget = (now: number): void => {
    for (const map of [grants, tokens]) for (const [id, until] of map) if (until <= now) map.delete(id);
  };

  async function read(): Promise<void> {
    for (;;) {
      const rows = await revocationsAfter(store.db, lastId, BATCH);
      apply(rows);
      const last = rows.at(-1);
      if (last) lastId = Math.max(lastId, last.id);
      if (rows.length < BATCH) break;
    }
    const now = Date.now();
    if (now - lastSweep >= SWEEP_EVERY_MS) {
      lastSweep = now;
      forget(now);
      await sweepRevocations(store.db, now);
    }
  }
  // Reads never overlap: a poll that comes while one runs shares it.
  const catchUp = (): Promise<void> => {
    reading ??= read().finally(() => {
      reading = undefined;
    });
    return reading;
  };

  await catchUp();
  const mine = listeners.get(store) ?? new Set<Listener>();
  mine.add(apply);
  listeners.set(store, mine);
  const poll = setInterval(() => {
    catchUp().catch((err: unknown) => opts.log.warn({ err }, 'token revocations: reading the list failed; tokens revoked elsewhere since are still taken'));
  }, opts.pollMs);
  poll.unref();

  return {
    isRevoked(principal) {
      const { grantId, tokenId, userId, issuedAt } = principal;
      // The clock is read only on a hit: most requests find nothing.
      const grantUntil = grantId === undefined ? undefined : grants.get(grantId);
      if (grantUntil !== undefined && grantUntil > Date.now()) return true;
      const tokenUntil = tokenId === undefined ? undefined : tokens.get(tokenId);
      if (tokenUntil !== undefined && tokenUntil > Date.now()) return true;
      const before = notBefore.get(userId);
      // A token without `iat` cannot show it came after.
      return before !== undefined && (issuedAt ?? 0) < before;
    },
    close() {
      clearInterval(poll);
      mine.delete(apply);
    },
  };
}
