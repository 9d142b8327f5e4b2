import { emailKey } from '../accounts/service.js';
import type { Db } from '../db/unit-of-work.js';
import type { memberIdsOf } from '../modules/families/queries.js';
import type { Row, TableSpec } from './archive-format.js';
import { refuse } from './refusal.js';
import { accountsOfEmailKeys, rowsOfModel, rowsOfUsers } from './repository.js';
import { NO_ROWS, type RowFilter } from './table-reader.js';

/**
 * Sign-in in archives (issue 19): what travels (the tables: account-tables.ts), and the rules
 * that come with it.
 *
 * Travels: accounts (the password hash with them: argon2id, so everyone keeps their password),
 * their passkeys, and the apps the operator registered (`cardshelf client add`, the engine's
 * `Client` rows of `oauth_records`). Does not travel: the engine's other rows (sessions, grants,
 * codes, refresh tokens, device codes), the account page's sessions, invitations and set-up
 * links, passkey challenges, throttle counters and token revocations. They are short-lived secrets
 * of the old server: users and apps sign in again.
 *
 * A family's archive as the operator writes it carries its members' accounts and passkeys (never
 * an owner flag: see asFamilyAccount), no registered apps; a member's own download
 * (`GET /user/family/export`) carries none, so that no member receives another's password hash.
 */

/** The engine's model of a registered app: the only `oauth_records` rows an archive carries. */
const CLIENT_MODEL = 'Client';

/** The rows of a whole instance's archive that are not all of their table's. */
export const INSTANCE_ACCOUNT_FILTERS: Record<string, RowFilter> = {
  oauth_records: rowsOfModel(CLIENT_MODEL),
};

/**
 * The sign-in rows of a family's archive: for the operator (no `reader`), its members' accounts
 * and passkeys; for a member's own download, none (a password hash is not another member's to
 * take, and the reader's own would hand an offline guess to whoever holds a stolen token).
 */
export function familyAccountFilters(members: ReturnType<typeof memberIdsOf>, reader: string | undefined): Record<string, RowFilter> {
  const ofMembers: RowFilter = reader === undefined ? rowsOfUsers(members) : NO_ROWS;
  return { accounts: ofMembers, passkeys: ofMembers, oauth_records: NO_ROWS };
}

/** Where a row is in the archive, for messages. */
type Where = (i: number) => string;

/**
 * The rows of a sign-in table, checked before anything is written (archive-rules.ts calls it
 * for every scope): an `oauth_records` row is a registered app and nothing else; an account's
 * email key is its email's; an email already taken here by another account is refused (moving
 * it would leave two people with one email, or one of them without an account).
 */
export async function checkAccountRows(db: Db, table: TableSpec, rows: Row[], where: Where, familyId: string | undefined): Promise<void> {
  if (table.name === 'oauth_records') {
    for (const [i, row] of rows.entries()) {
      if (familyId !== undefined) refuse(`the family archive of ${familyId} holds registered apps: only a whole instance's archive carries them (${where(i)})`);
      if (row.model !== CLIENT_MODEL) {
        refuse(`an archive carries registered apps only, not ${String(row.model)} records (sign-ins are not moved) (${where(i)})`);
      }
    }
  }
  if (table.name !== 'accounts') return;
  for (const [i, row] of rows.entries()) {
    if (row.email_key !== emailKey(String(row.email))) refuse(`bad record in ${where(i)}: email_key is not the email's`);
  }
  const keys = rows.map((r) => String(r.email_key));
  for (let i = 0; i < keys.length; i += 1000) {
    const found = await accountsOfEmailKeys(db, keys.slice(i, i + 1000));
    for (const account of found) {
      const at = rows.findIndex((r) => r.email_key === account.email_key);
      const row = rows[at]!;
      if (account.user_id !== row.user_id) {
        refuse(`the archive's account ${String(row.user_id)} has the email ${String(row.email)}, which belongs to another account here, ${account.user_id} (${where(at)})`);
      }
    }
  }
}

/**
 * An account as a family's archive brings it: never an owner of the target. Owning is the
 * operator's role on one server; the family's members come as users.
 */
export function asFamilyAccount(row: Row): Row {
  return { ...row, owner: 0 };
}
