import type { Adapter, AdapterPayload } from 'oidc-provider';
import { announceRevocations, grantRevocation, recordRevocationsNow } from '../auth/revocations.js';
import type { Store } from '../db/dialect.js';
import { UnstorableText } from '../db/errors.js';
import * as records from './oauth-records-repository.js';

/**
 * The OAuth engine's storage (oidc-provider's Adapter) on the app's own database: one table,
 * one row per model (Grant, Session, AuthorizationCode, DeviceCode, RefreshToken, ...) and id,
 * the payload as JSON (its SQL: oauth-records-repository.ts). On PostgreSQL every instance sees
 * every code, grant and session.
 *
 * Rows outlive their expiry by EXPIRED_KEPT_MS: the engine checks expiry itself, and a device
 * code it still finds after it expired answers `expired_token` (which clients act on) rather than
 * `invalid_grant`. The sweep removes them after that.
 */
export const EXPIRED_KEPT_MS = 60 * 60 * 1000;

/** Client metadata for a client id nobody registered (oauth/shims.ts), or undefined to refuse it. */
export type UnknownClient = (clientId: string) => AdapterPayload | undefined;

export type AdapterClass = new (model: string) => Adapter;

export interface AdapterOptions {
  /**
   * Refresh reuse: a rotated refresh token found again within this many ms of its first use is
   * handed to the engine as unused, so two refreshes racing with one token (two tabs, a retry
   * after a lost answer) both succeed. After it, the engine sees it used and revokes the whole
   * grant (a stolen token replayed), as OAuth 2.0 Security BCP section 4.14 advises.
   */
  refreshReuseGraceMs: number;
  /**
   * The engine's own error for a looked-up value the database refuses (a client id, token or code
   * with U+0000, src/db/errors.ts UnstorableText): it then answers `invalid_request` in its own
   * shape, where a database error would be its `server_error`.
   */
  refuseUnstorable: () => Error;
  now?: () => number;
}

export function createAdapter(store: Store, unknownClient: UnknownClient, opts: AdapterOptions): AdapterClass {
  const { db, dialect } = store;
  const now = opts.now ?? Date.now;

  /** The engine marks `consumed` in whole seconds (its epochTime). */
  const withinGrace = (payload: AdapterPayload): boolean =>
    typeof payload.consumed === 'number' && now() - payload.consumed * 1000 < opts.refreshReuseGraceMs;

  // Every value the engine looks up comes from the request; what it stores, it made itself.
  const read = async (model: string, column: 'id' | 'user_code' | 'uid', value: string): Promise<AdapterPayload | undefined> => {
    try {
      const payload = await records.findPayload(db, model, column, value);
      return payload === undefined ? undefined : (JSON.parse(payload) as AdapterPayload);
    } catch (err) {
      throw err instanceof UnstorableText ? opts.refuseUnstorable() : err;
    }
  };

  return class KyselyAdapter implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const fields = {
        payload: JSON.stringify(payload),
        grant_id: payload.grantId ?? null,
        user_code: payload.userCode ?? null,
        uid: payload.uid ?? null,
        account_id: typeof payload.accountId === 'string' ? payload.accountId : null,
        client_id: typeof payload.clientId === 'string' ? payload.clientId : null,
        expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000).toISOString() : null,
      };
      await records.upsertRecord(db, this.model, id, fields);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const found = await read(this.model, 'id', id);
      if (found && this.model === 'RefreshToken' && withinGrace(found)) return { ...found, consumed: undefined };
      if (found || this.model !== 'Client') return found;
      return unknownClient(id);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return read(this.model, 'user_code', userCode);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return read(this.model, 'uid', uid);
    }

    /**
     * Marks a code or refresh token used. Racing consumers of one token are serialised by the
     * key lock, so the engine's "already consumed" check sees the first one's mark. The first
     * mark is kept: the refresh reuse grace counts from the first use, not the latest.
     */
    async consume(id: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await dialect.lockKey(trx, `oauth:${this.model}:${id}`);
        const found = await records.findPayload(trx, this.model, 'id', id);
        if (found === undefined) return;
        const stored = JSON.parse(found) as AdapterPayload;
        if (stored.consumed) return;
        const payload = { ...stored, consumed: Math.floor(now() / 1000) };
        await records.updatePayload(trx, this.model, id, JSON.stringify(payload));
      });
    }

    async destroy(id: string): Promise<void> {
      await records.deleteRecord(db, this.model, id);
    }

    /**
     * The engine revokes a grant (a code replayed, a refresh token reused or revoked) model by
     * model; its access tokens are not stored: the grant goes on the revocation list instead.
     */
    async revokeByGrantId(grantId: string): Promise<void> {
      if (this.model === 'AccessToken') {
        const row = grantRevocation(grantId);
        await recordRevocationsNow(store, [row]);
        announceRevocations(store, [row]);
      }
      await records.deleteUnderGrants(db, [grantId]);
    }
  };
}

/** Removes what expired more than EXPIRED_KEPT_MS ago; returns how many rows. */
export async function sweepExpired(store: Store, now = Date.now()): Promise<number> {
  return records.deleteExpiredBefore(store.db, new Date(now - EXPIRED_KEPT_MS).toISOString());
}
