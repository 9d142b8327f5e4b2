import { recordRevocations, type Revocation } from '../auth/revocation-repository.js';
import { announceRevocations, grantRevocation } from '../auth/revocations.js';
import type { Store } from '../db/dialect.js';
import type { Trx } from '../db/unit-of-work.js';

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
  const grants = await db.selectFrom('oauth_records').select(['id', 'payload', 'client_id']).where('model', '=', 'Grant').where('account_id', '=', accountId).execute();
  const clientIds = [...new Set(grants.map((g) => g.client_id).filter((id): id is string => id !== null))];
  const clients = clientIds.length === 0 ? [] : await db.selectFrom('oauth_records').select(['id', 'payload']).where('model', '=', 'Client').where('id', 'in', clientIds).execute();
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
    const removed = await trx.deleteFrom('oauth_records').where('model', '=', 'Grant').where('id', '=', grantId).where('account_id', '=', accountId).executeTakeFirst();
    if (removed.numDeletedRows === 0n) return [];
    await trx.deleteFrom('oauth_records').where('grant_id', '=', grantId).execute();
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
  const grants = await trx.selectFrom('oauth_records').select('id').where('model', '=', 'Grant').where('account_id', '=', accountId).execute();
  const grantIds = grants.map((g) => g.id);
  await trx.deleteFrom('oauth_records').where('account_id', '=', accountId).execute();
  if (grantIds.length > 0) await trx.deleteFrom('oauth_records').where('grant_id', 'in', grantIds).execute();
  return revokeGrants(trx, store, grantIds);
}

/** Revocations of the grants `grantIds`, written in the caller's transaction; announce them after commit. */
export async function revokeGrants(trx: Trx, store: Store, grantIds: readonly string[]): Promise<Revocation[]> {
  const rows = grantIds.map((id) => grantRevocation(id));
  await recordRevocations(trx, store.dialect, rows);
  return rows;
}
