import type { Kysely, Transaction } from 'kysely';
import type { AccountRow, Database } from '../db/database.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertAccount(db: Db, row: AccountRow): Promise<boolean> {
  const result = await db
    .insertInto('accounts')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export function findByEmailKey(db: Db, emailKey: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('email_key', '=', emailKey).executeTakeFirst();
}

export function findByUserId(db: Db, userId: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

export function listAccounts(db: Db): Promise<AccountRow[]> {
  return db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('user_id').execute();
}

export async function countAccounts(db: Db): Promise<number> {
  const row = await db.selectFrom('accounts').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Returns whether a row changed. */
export async function updateAccount(
  db: Db,
  userId: string,
  fields: Partial<Pick<AccountRow, 'password_hash' | 'disabled' | 'display_name'>> & { updated_at: string },
): Promise<boolean> {
  const result = await db.updateTable('accounts').set(fields).where('user_id', '=', userId).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteAccount(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('accounts').where('user_id', '=', userId).execute();
}
