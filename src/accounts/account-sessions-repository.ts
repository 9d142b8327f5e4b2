import type { Kysely, Transaction } from 'kysely';
import type { AccountSessionsTable, Database } from '../db/database.js';

/** The SQL of the account page's sessions (account-sessions.ts holds their rules). */

type Db = Kysely<Database> | Transaction<Database>;

export async function insertSession(db: Db, row: AccountSessionsTable): Promise<void> {
  await db.insertInto('account_sessions').values(row).execute();
}

/** The session `id`, if it has not expired by `now` (ISO time). */
export function findLiveSession(db: Db, id: string, now: string): Promise<AccountSessionsTable | undefined> {
  return db.selectFrom('account_sessions').selectAll().where('id', '=', id).where('expires_at', '>', now).executeTakeFirst();
}

export async function confirmSession(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('account_sessions').set({ confirmed_at: at }).where('id', '=', id).execute();
}

export async function deleteSession(db: Db, id: string): Promise<void> {
  await db.deleteFrom('account_sessions').where('id', '=', id).execute();
}

export async function deleteSessionsOf(db: Db, userId: string): Promise<number> {
  const result = await db.deleteFrom('account_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteExpiredSessions(db: Db, now: string): Promise<number> {
  const result = await db.deleteFrom('account_sessions').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
