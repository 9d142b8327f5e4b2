import type { SetupLinksTable } from '../db/database.js';
import type { Db } from '../db/unit-of-work.js';

/** The SQL of `setup_links` (src/accounts/setup-link.ts, which holds the lock). */

export function findSetupLink(db: Db, secretHash: string): Promise<SetupLinksTable | undefined> {
  return db.selectFrom('setup_links').selectAll().where('secret_hash', '=', secretHash).executeTakeFirst();
}

export async function insertSetupLink(db: Db, row: SetupLinksTable): Promise<void> {
  await db.insertInto('setup_links').values(row).execute();
}

/** Marks every unused link used at `usedAt` (ISO). */
export async function spendAll(db: Db, usedAt: string): Promise<void> {
  await db.updateTable('setup_links').set({ used_at: usedAt }).where('used_at', 'is', null).execute();
}

/** Makes the links spent at `usedAt` (ISO) unused again. */
export async function unspend(db: Db, usedAt: string): Promise<void> {
  await db.updateTable('setup_links').set({ used_at: null }).where('used_at', '=', usedAt).execute();
}
