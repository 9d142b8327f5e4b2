import { announceRevocations, grantRevocation, recordRevocations, type Revocation } from '../auth/revocations.js';
import type { Store } from '../db/dialect.js';
import type { Trx } from '../db/unit-of-work.js';
import * as records from './oauth-records-repository.js';

/** An app an account has signed in to: one grant of the engine (oidc-provider). */
export interface SignedInApp {
  grantId: string;
  clientId: string;
  /** The registered app's name (`cardshelf client add`); none for an unregistered one. */
  name: string | undefined;
  /** Epoch seconds the grant was made. */
  since: number;
}

/**
 * The apps an account has signed in to, newest first: the engine's grants of that account
 * (`oauth_records.account_id`, migration 009), each named by its registered client if it has one.
 */
export async function signedInApps(store: Store, accountId: string): Promise<SignedInApp[]> {
  const { db } = store;
  const grants = await records.grantsOfAccount(db, accountId);
  const clientIds = [...new Set(grants.map((g) => g.client_id).filter((id): id is string => id !== null))];
  const clients = clientIds.length === 0 ? [] : await records.payloadsOf(db, 'Client', clientIds);
  const names = new Map(
    clients.map((c) => {
      const md = JSON.parse(c.payload) as { client_name?: string };
      return [c.id, md.client_name];
    }),
  );
  return grants
    .map((g) => {
      const payload = JSON.parse(g.payload) as { iat?: number; exp?: number };
      return { grantId: g.id, clientId: g.client_id ?? '', name: names.get(g.client_id ?? ''), since: payload.iat ?? 0, exp: payload.exp };
    })
    .filter((g) => g.exp === undefined || g.exp * 1000 > Date.now())
    .map(({ exp: _exp, ...app }) => app)
    .sort((a, b) => b.since - a.since || a.grantId.localeCompare(b.grantId));
}

/**
 * Signs an app out: its grant and everything issued under it (refresh tokens, codes) are removed
 * at once, so its next refresh fails, and its access tokens go on the revocation list
 * (src/auth/revocations.ts). Only the account's own grants: false when `grantId` is not one of them.
 */
export async function revokeSignedInApp(store: Store, accountId: string, grantId: string): Promise<boolean> {
  const revoked = await store.db.transaction().execute(async (trx) => {
    if (!(await records.deleteRecord(trx, 'Grant', grantId, accountId))) return [];
    await records.deleteUnderGrants(trx, [grantId]);
    return revokeGrants(trx, store, [grantId]);
  });
  announceRevocations(store, revoked);
  return revoked.length > 0;
}

/**
 * Ends every sign-in of an account, in the caller's transaction (a disable, a password reset): its
 * grants, refresh tokens, codes and the engine's browser sessions (model `Session`), so that the
 * browser must sign in again; the grants' access tokens go on the revocation list. Answers the
 * revocations to announce after commit.
 */
export async function endSignInsOf(trx: Trx, store: Store, accountId: string): Promise<Revocation[]> {
  const grantIds = await records.grantIdsBy(trx, 'account_id', accountId);
  await records.deleteRecordsBy(trx, 'account_id', accountId);
  await records.deleteUnderGrants(trx, grantIds);
  return revokeGrants(trx, store, grantIds);
}

/** Revocations of the grants `grantIds`, written in the caller's transaction; announce them after commit. */
export async function revokeGrants(trx: Trx, store: Store, grantIds: readonly string[]): Promise<Revocation[]> {
  const rows = grantIds.map((id) => grantRevocation(id));
  await recordRevocations(trx, store.dialect, rows);
  return rows;
}
