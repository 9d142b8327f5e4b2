import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '../db/dialect.js';
import * as repo from './account-sessions-repository.js';

/**
 * The account page's sessions (`/account`), kept on the server: a session is a row, found by
 * the SHA-256 of the secret its cookie carries. It ends when its holder signs out, 12 hours
 * after signing in, and when the account is disabled or its password reset
 * (endAccountSessions). Credential changes (adding or removing a passkey) need the password
 * entered within the last FRESH_CONFIRMATION_MS in that session (`confirmed`).
 */

/** How long an account page session lasts after signing in. */
export const ACCOUNT_SESSION_MS = 12 * 3_600_000;
/** How recent the password must be for a credential change: a shared tablet left signed in is not enough. */
export const FRESH_CONFIRMATION_MS = 5 * 60_000;

export interface AccountSession {
  /** The row's id (the secret's hash): what the session's form tokens are bound to. */
  id: string;
  userId: string;
  /** The password was entered within FRESH_CONFIRMATION_MS. */
  confirmed: boolean;
}

export interface AccountSessions {
  /** A new session for `userId`, signed in with the password just now; answers the cookie's secret. */
  start(userId: string): Promise<string>;
  /** The live session the cookie's secret opens, if any. */
  find(secret: string): Promise<AccountSession | undefined>;
  /** The password was entered again in the session `id`. */
  confirm(id: string): Promise<void>;
  /** Ends the session `id` (signing out). */
  end(id: string): Promise<void>;
}

const hashOf = (secret: string): string => createHash('sha256').update(secret).digest('hex');

export function createAccountSessions(store: Store, now: () => number = Date.now): AccountSessions {
  const { db } = store;
  const iso = (ms: number): string => new Date(ms).toISOString();
  return {
    async start(userId) {
      const secret = randomBytes(32).toString('base64url');
      const at = now();
      await repo.insertSession(db, { id: hashOf(secret), user_id: userId, created_at: iso(at), confirmed_at: iso(at), expires_at: iso(at + ACCOUNT_SESSION_MS) });
      return secret;
    },
    async find(secret) {
      if (!secret) return undefined;
      const row = await repo.findLiveSession(db, hashOf(secret), iso(now()));
      if (!row) return undefined;
      return { id: row.id, userId: row.user_id, confirmed: now() - Date.parse(row.confirmed_at) < FRESH_CONFIRMATION_MS };
    },
    async confirm(id) {
      await repo.confirmSession(db, id, iso(now()));
    },
    async end(id) {
      await repo.deleteSession(db, id);
    },
  };
}

/**
 * Ends every account page session of `userId`: called when the account is disabled or its
 * password reset, so whoever had the page open must sign in again. Answers how many ended.
 */
export async function endAccountSessions(store: Store, userId: string): Promise<number> {
  return repo.deleteSessionsOf(store.db, userId);
}

/** Removes the sessions past their time. */
export async function sweepAccountSessions(store: Store, now = Date.now()): Promise<number> {
  return repo.deleteExpiredSessions(store.db, new Date(now).toISOString());
}
