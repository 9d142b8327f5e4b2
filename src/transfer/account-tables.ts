import { tableSpec, type TableSpec } from './table-spec.js';

/**
 * The sign-in tables an archive carries (format version 2), after the others: accounts, their
 * passkeys, and registered apps (rows of the OAuth engine's `oauth_records`). What travels and
 * what does not, and the rules for them: transfer/accounts.ts. Checked against the database by
 * `tableSpec` (table-spec.ts, which archive-format.ts shares, so neither imports the other).
 */
export const ACCOUNT_TABLES: readonly TableSpec[] = [
  tableSpec({
    name: 'accounts',
    columns: [
      { name: 'user_id', type: 'text' },
      { name: 'email', type: 'text' },
      { name: 'email_key', type: 'text' },
      { name: 'display_name', type: 'text' },
      { name: 'password_hash', type: 'text', nullable: true },
      { name: 'owner', type: 'int' },
      { name: 'disabled', type: 'int' },
      { name: 'created_at', type: 'text' },
      { name: 'updated_at', type: 'text' },
    ],
    order: ['user_id'],
    keys: [['user_id'], ['email_key']],
  }),
  tableSpec({
    name: 'passkeys',
    columns: [
      { name: 'id', type: 'text' },
      { name: 'user_id', type: 'text' },
      { name: 'public_key', type: 'text' },
      { name: 'counter', type: 'bigint' },
      { name: 'transports', type: 'json' },
      { name: 'name', type: 'text' },
      { name: 'created_at', type: 'text' },
      { name: 'last_used_at', type: 'text', nullable: true },
    ],
    order: ['id'],
    keys: [['id']],
    references: [{ column: 'user_id', table: 'accounts' }],
  }),
  tableSpec({
    // Registered apps only (`Client`, transfer/accounts.ts): the exporter selects them, the importer refuses others.
    name: 'oauth_records',
    columns: [
      { name: 'model', type: 'text' },
      { name: 'id', type: 'text' },
      { name: 'payload', type: 'json' },
      { name: 'grant_id', type: 'text', nullable: true },
      { name: 'user_code', type: 'text', nullable: true },
      { name: 'uid', type: 'text', nullable: true },
      { name: 'expires_at', type: 'text', nullable: true },
      { name: 'account_id', type: 'text', nullable: true },
      { name: 'client_id', type: 'text', nullable: true },
    ],
    order: ['model', 'id'],
    keys: [['model', 'id']],
  }),
];
