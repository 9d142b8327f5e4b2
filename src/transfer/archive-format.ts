/**
 * The archive `cardshelf export` writes and `cardshelf import` reads (docs/deploy.md, "Moving
 * house"): a gzipped tar whose entries come in this order:
 *
 *   cardshelf-archive.json       {format, version, scope, tables}: read first, so that an archive
 *                                of a newer version is refused before anything else is read
 *   media/<sha256>               the bytes of each media object, named by their SHA-256
 *   tables/<NN>-<table>/<n>.ndjson  rows, one JSON object a line, in key order, in batches
 *   manifest.json                every entry before it with its size and SHA-256, and the rows
 *                                of each table: the importer checks the whole archive against it
 *                                before it writes anything
 *
 * Nothing in it depends on the time or the database it was written from (tar times are 0,
 * sizes are numbers on every database, rows are in byte-wise key order), so exporting the same
 * data twice, from SQLite or PostgreSQL, gives the same bytes.
 */

import { ACCOUNT_TABLES } from './account-tables.js';
import { LINK_TABLES } from './link-tables.js';
import { columnsOf, tableSpec, type ColumnSpec, type Row, type TableSpec } from './table-spec.js';

export { columnsOf, type ColumnSpec, type ColumnType, type Reference, type Row, type TableSpec } from './table-spec.js';

export const ARCHIVE_FORMAT = 'cardshelf-archive';
/**
 * Raised when the format changes; an importer refuses archives of a later version than its own
 * and reads earlier ones (a column a version added is null in an older archive's rows; a table
 * a version added is absent from an older archive).
 *   1: the first.
 *   2: a family's players (`family_devices`) carry their name, type, settings (config,
 *      shortcuts) and who registered them; never their credential (`credential_id`) or their last
 *      report (`status`, `status_at`): an imported player is offline until registered again.
 *      And accounts, passkeys and registered apps (transfer/accounts.ts).
 *   3: linked services (`links`, `link_cards`: transfer/link-tables.ts), named without their
 *      sign-in; a Cardshelf of version 2 would refuse their entries as unexpected, so it refuses
 *      the archive as newer instead.
 *   4: wishlists carry their name (null in older archives: unnamed).
 */
export const ARCHIVE_VERSION = 4;

export const HEADER_ENTRY = 'cardshelf-archive.json';
export const MANIFEST_ENTRY = 'manifest.json';
export const MEDIA_PREFIX = 'media/';

/** Rows a batch entry holds at most, and the bytes after which a batch is cut short. */
export const BATCH_ROWS = 100;
export const BATCH_BYTES = 8 * 1024 * 1024;
/**
 * A table entry larger than this is refused by the importer (it reads a batch whole): a batch
 * the exporter writes stays under BATCH_BYTES plus one row, and a row is at most a card
 * document of about a MiB (BODY_LIMIT).
 */
export const MAX_BATCH_ENTRY_BYTES = 64 * 1024 * 1024;
/** A line of a batch (one row) larger than this is refused: a card document is ~1 MiB (BODY_LIMIT). */
export const MAX_ROW_BYTES = 16 * 1024 * 1024;
/** The header entry larger than this is refused before it is read. */
export const MAX_HEADER_BYTES = 64 * 1024;

/**
 * The largest manifest an archive of `entries` entries can have: a line of about 150 bytes an
 * entry (a name, a size, a SHA-256), the row counts, room to spare. The importer refuses a
 * larger one before reading it, so that a manifest that unpacks to gigabytes costs nothing.
 */
export const maxManifestBytes = (entries: number): number => 64 * 1024 + entries * 512;

/** What the archive holds: the whole instance, or one family with what belongs to it. */
export type ArchiveScope = { kind: 'instance' } | { kind: 'family'; familyId: string };

export interface ArchiveHeader {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  scope: ArchiveScope;
  tables: string[];
}

export interface ManifestEntry {
  name: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  scope: ArchiveScope;
  /** Rows of each table, in table order. */
  rows: Record<string, number>;
  entries: ManifestEntry[];
}

const text = <N extends string>(name: N, nullable = false): ColumnSpec<N> => ({ name, type: 'text', nullable });
const json = <N extends string>(name: N, nullable = false): ColumnSpec<N> => ({ name, type: 'json', nullable });
const int = <N extends string>(name: N): ColumnSpec<N> => ({ name, type: 'int' });
const bigint = <N extends string>(name: N): ColumnSpec<N> => ({ name, type: 'bigint' });

/**
 * The tables, parents before children (the importer inserts in this order, and the foreign
 * keys are checked on every insert). Migration bookkeeping and readiness_probe are not data.
 */
export const TABLES: readonly TableSpec[] = [
  tableSpec({
    name: 'media_objects',
    columns: [text('sha256'), bigint('size'), text('content_type'), text('created_at')],
    order: ['sha256'],
    keys: [['sha256']],
    shared: true,
  }),
  tableSpec({
    name: 'cards',
    columns: [
      text('card_id'),
      text('user_id'),
      text('origin'),
      int('is_free'),
      int('in_club'),
      int('deleted'),
      text('sortkey'),
      text('created_at'),
      text('updated_at'),
      json('doc'),
      json('summary'),
    ],
    // Versions do not travel: a row arrives at version 1 (and so for groups and wishlists).
    leftOut: ['version'],
    order: ['card_id'],
    keys: [['card_id']],
  }),
  tableSpec({
    name: 'families',
    columns: [text('family_id'), text('country'), json('flags'), text('created_at'), text('updated_at')],
    order: ['family_id'],
    keys: [['family_id']],
  }),
  tableSpec({
    name: 'family_memberships',
    columns: [
      text('user_id'),
      text('family_id'),
      int('listed'),
      text('added_at'),
      int('approved'),
      text('approved_at', true),
      int('verified'),
      text('verified_email', true),
      int('position'),
    ],
    order: ['user_id'],
    keys: [['user_id']],
    references: [{ column: 'family_id', table: 'families' }],
  }),
  tableSpec({
    name: 'family_devices',
    // A player's credential (`credential_id`) is left out: a token of the old instance, or one a
    // member revoked before a backup was taken, must never work again from an archive. Its last
    // report (`status`, `status_at`) too: it is live state, and a copy of it would count the
    // player online for a moment with no one listening for commands.
    columns: [
      text('device_id'),
      text('family_id'),
      text('added_at'),
      int('position'),
      { ...text('name', true), since: 2 },
      { ...text('device_type', true), since: 2 },
      { ...json('config', true), since: 2 },
      { ...json('shortcuts', true), since: 2 },
      { ...text('registered_by', true), since: 2 },
    ],
    leftOut: ['credential_id', 'status', 'status_at'],
    order: ['device_id'],
    keys: [['device_id']],
    references: [{ column: 'family_id', table: 'families' }],
  }),
  tableSpec({
    name: 'family_events',
    columns: [text('family_id'), text('type'), text('at'), json('details')],
    leftOut: ['id'],
    order: ['id'],
    internalOrder: true,
    keys: [],
    references: [{ column: 'family_id', table: 'families' }],
  }),
  tableSpec({
    name: 'library_records',
    columns: [
      text('record_id'),
      text('family_id'),
      text('card_id'),
      text('provenance_id'),
      text('reason'),
      text('created_at'),
      text('updated_at'),
    ],
    order: ['record_id'],
    keys: [['record_id'], ['family_id', 'card_id']],
    references: [
      { column: 'family_id', table: 'families' },
      { column: 'card_id', table: 'cards', optionalInFamilyArchive: true },
    ],
  }),
  tableSpec({
    name: 'library_groups',
    columns: [
      text('group_id'),
      text('family_id'),
      text('name'),
      text('image_id'),
      json('items'),
      text('created_at'),
      text('last_modified_at'),
    ],
    leftOut: ['version'],
    order: ['group_id'],
    keys: [['group_id']],
    references: [{ column: 'family_id', table: 'families' }],
  }),
  tableSpec({
    name: 'wishlists',
    columns: [text('wishlist_id'), text('share_id'), text('user_id'), json('content'), text('created_at'), text('updated_at'), { ...text('name', true), since: 4 }],
    leftOut: ['version'],
    order: ['wishlist_id'],
    keys: [['wishlist_id'], ['share_id']],
  }),
  tableSpec({
    name: 'media_holdings',
    columns: [text('owner_id'), text('sha256'), text('kind'), bigint('size'), text('created_at')],
    order: ['owner_id', 'sha256', 'kind'],
    keys: [['owner_id', 'sha256', 'kind']],
    references: [{ column: 'sha256', table: 'media_objects' }],
  }),
  tableSpec({
    name: 'audio_uploads',
    columns: [
      text('upload_id'),
      text('user_id'),
      text('filename', true),
      text('declared_sha256', true),
      text('state'),
      text('source_sha256', true),
      text('url_expires_at'),
      text('created_at'),
      text('updated_at'),
    ],
    order: ['upload_id'],
    keys: [['upload_id']],
  }),
  tableSpec({
    name: 'transcodes',
    columns: [
      text('source_sha256'),
      int('loudnorm'),
      text('status'),
      int('attempts'),
      text('lease_until', true),
      int('progress'),
      text('transcoded_sha256', true),
      json('transcoded_info', true),
      text('error', true),
      text('created_at'),
      text('updated_at'),
    ],
    order: ['source_sha256', 'loudnorm'],
    keys: [['source_sha256', 'loudnorm']],
    shared: true,
  }),
  tableSpec({
    name: 'display_icons',
    columns: [
      text('display_icon_id'),
      text('user_id'),
      text('media_id'),
      text('title', true),
      json('public_tags'),
      text('created_at'),
    ],
    order: ['display_icon_id'],
    keys: [['display_icon_id'], ['user_id', 'media_id']],
    references: [{ column: 'media_id', table: 'media_objects' }],
  }),
  tableSpec({
    name: 'family_images',
    columns: [text('family_id'), text('image_id'), bigint('size'), text('created_at')],
    order: ['family_id', 'image_id'],
    keys: [['family_id', 'image_id']],
    references: [
      { column: 'family_id', table: 'families' },
      { column: 'image_id', table: 'media_objects' },
    ],
  }),
  // Last: nothing else names them, and an archive of version 1 ends before them.
  ...ACCOUNT_TABLES,
  // After them: an archive of version 2 ends before them.
  ...LINK_TABLES,
];

export const TABLE_NAMES = TABLES.map((t) => t.name);

/** `tables/03-families/000001.ndjson`: the prefix numbers the tables so that names sort in order. */
export function batchEntryName(tableIndex: number, batch: number): string {
  const table = TABLES[tableIndex]!;
  return `tables/${String(tableIndex + 1).padStart(2, '0')}-${table.name}/${String(batch).padStart(6, '0')}.ndjson`;
}

const BATCH_ENTRY = /^tables\/(\d{2})-([a-z_]+)\/(\d{6})\.ndjson$/;

/** The table index and batch number of a batch entry's name, or undefined. */
export function parseBatchEntryName(name: string): { tableIndex: number; batch: number } | undefined {
  const match = BATCH_ENTRY.exec(name);
  if (!match) return undefined;
  const tableIndex = Number(match[1]) - 1;
  if (TABLES[tableIndex]?.name !== match[2]) return undefined;
  return { tableIndex, batch: Number(match[3]) };
}

/** A row as read from either database, in the archive's form: columns in spec order, sizes as numbers. */
export function encodeRow(table: TableSpec, row: Record<string, unknown>): string {
  const out: Row = {};
  for (const column of table.columns) {
    const value = row[column.name];
    if (value === null || value === undefined) out[column.name] = null;
    else if (column.type === 'bigint' || column.type === 'int') out[column.name] = Number(value);
    else if (typeof value === 'string') out[column.name] = value;
    else throw new Error(`${table.name}.${column.name} is not text in the database`);
  }
  return JSON.stringify(out);
}

/** A row of the archive that cannot be imported as it is: the reason, with where it is. */
export class BadRow extends Error {}

/**
 * Parses and checks one line of a batch of an archive of `version`: exactly the table's columns
 * of that version, each of its type; the columns added since are null. What passes can be
 * inserted on either database as it is.
 */
export function decodeRow(table: TableSpec, line: string, version = ARCHIVE_VERSION): Row {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new BadRow('not a JSON line');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new BadRow('not a JSON object');
  const row = parsed as Record<string, unknown>;
  const names = Object.keys(row);
  const columns = columnsOf(table, version);
  const expected = columns.map((c) => c.name);
  if (names.length !== expected.length || names.some((n, i) => n !== expected[i])) {
    throw new BadRow(`columns are [${names.join(', ')}], expected [${expected.join(', ')}]`);
  }
  for (const column of columns) {
    const value = row[column.name];
    if (value === null) {
      if (!column.nullable) throw new BadRow(`${column.name} is null`);
      continue;
    }
    switch (column.type) {
      case 'text':
      case 'json':
        if (typeof value !== 'string') throw new BadRow(`${column.name} is not a string`);
        if (value.includes('\u0000')) throw new BadRow(`${column.name} holds U+0000`);
        if (column.type === 'json') {
          try {
            JSON.parse(value);
          } catch {
            throw new BadRow(`${column.name} is not JSON`);
          }
        }
        break;
      case 'int':
        if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new BadRow(`${column.name} is not an integer`);
        break;
      case 'bigint':
        if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new BadRow(`${column.name} is not a size`);
        break;
    }
  }
  if (columns.length === table.columns.length) return row as Row;
  return Object.fromEntries(table.columns.map((c) => [c.name, (row[c.name] as Row[string] | undefined) ?? null]));
}

/** A key's value in a row, as one string (for sets and messages). */
export const keyOf = (row: Row, key: readonly string[]): string => key.map((c) => String(row[c])).join(' ');
