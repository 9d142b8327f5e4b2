import type { Insertable } from 'kysely';
import type { OAuthRecordsTable } from '../db/database.js';
import type { Db } from '../db/unit-of-work.js';

/**
 * The SQL of `oauth_records`, the OAuth engine's storage: its own rows (src/oauth/adapter.ts),
 * the device flow's poll records (shims.ts), the registered apps (clients.ts) and the reads and
 * removals of an account's sign-ins (grants.ts). Every statement on the table is here. Rows are
 * keyed by model and id; `grant_id`, `account_id` and `client_id` copy the payload's, for the
 * look-ups below.
 */

/** A row's columns but its key; the optional ones are null when left out. */
export type RecordFields = Omit<Insertable<OAuthRecordsTable>, 'model' | 'id'>;

/** The payload (JSON) of the record of `model` whose `column` is `value`. */
export async function findPayload(db: Db, model: string, column: 'id' | 'user_code' | 'uid', value: string): Promise<string | undefined> {
  const row = await db.selectFrom('oauth_records').select('payload').where('model', '=', model).where(column, '=', value).executeTakeFirst();
  return row?.payload;
}

/** The records of `model` with these ids, as id and payload. */
export function payloadsOf(db: Db, model: string, ids: readonly string[]): Promise<Pick<OAuthRecordsTable, 'id' | 'payload'>[]> {
  return db.selectFrom('oauth_records').select(['id', 'payload']).where('model', '=', model).where('id', 'in', ids).execute();
}

/** The payloads (JSON) of every record of `model`, in id order. */
export async function listPayloads(db: Db, model: string): Promise<string[]> {
  const rows = await db.selectFrom('oauth_records').select('payload').where('model', '=', model).orderBy('id').execute();
  return rows.map((row) => row.payload);
}

/** The engine's grants of an account. */
export function grantsOfAccount(db: Db, accountId: string): Promise<Pick<OAuthRecordsTable, 'id' | 'payload' | 'client_id'>[]> {
  return db.selectFrom('oauth_records').select(['id', 'payload', 'client_id']).where('model', '=', 'Grant').where('account_id', '=', accountId).execute();
}

/** The ids of the grants of an account (`account_id`) or of an app (`client_id`). */
export async function grantIdsBy(db: Db, column: 'account_id' | 'client_id', value: string): Promise<string[]> {
  const rows = await db.selectFrom('oauth_records').select('id').where('model', '=', 'Grant').where(column, '=', value).execute();
  return rows.map((row) => row.id);
}

/** Writes the record, or replaces `fields` of the one with its model and id. */
export async function upsertRecord(db: Db, model: string, id: string, fields: RecordFields): Promise<void> {
  await db
    .insertInto('oauth_records')
    .values({ model, id, ...fields })
    .onConflict((oc) => oc.columns(['model', 'id']).doUpdateSet(fields))
    .execute();
}

/** Writes the record unless one has its model and id; whether it did. */
export async function insertRecordIfAbsent(db: Db, model: string, id: string, fields: RecordFields): Promise<boolean> {
  const result = await db
    .insertInto('oauth_records')
    .values({ model, id, ...fields })
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export async function updatePayload(db: Db, model: string, id: string, payload: string): Promise<void> {
  await db.updateTable('oauth_records').set({ payload }).where('model', '=', model).where('id', '=', id).execute();
}

/** Removes the record of `model` and `id` (only if it is the account's, with `accountId`); whether there was one. */
export async function deleteRecord(db: Db, model: string, id: string, accountId?: string): Promise<boolean> {
  let query = db.deleteFrom('oauth_records').where('model', '=', model).where('id', '=', id);
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const result = await query.executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Removes everything issued under these grants (codes, refresh tokens, ...). */
export async function deleteUnderGrants(db: Db, grantIds: readonly string[]): Promise<void> {
  if (grantIds.length === 0) return;
  await db.deleteFrom('oauth_records').where('grant_id', 'in', grantIds).execute();
}

/** Removes every record of an account (`account_id`) or of an app (`client_id`), of any model. */
export async function deleteRecordsBy(db: Db, column: 'account_id' | 'client_id', value: string): Promise<void> {
  await db.deleteFrom('oauth_records').where(column, '=', value).execute();
}

/** Removes the records expired before `before` (ISO); returns how many. */
export async function deleteExpiredBefore(db: Db, before: string): Promise<number> {
  const result = await db.deleteFrom('oauth_records').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
