import { createHash } from 'node:crypto';
import { pipeline, type Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import type { Store } from '../db/dialect.js';
import type { Db } from '../db/unit-of-work.js';
import type { MediaStore } from '../media-store/media-store.js';
import { memberIdsOf } from '../modules/families/queries.js';
import { familyOwnerId } from '../modules/media/ownership.js';
import { readersAmong } from '../modules/media/queries.js';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  BATCH_BYTES,
  BATCH_ROWS,
  HEADER_ENTRY,
  MANIFEST_ENTRY,
  MEDIA_PREFIX,
  TABLES,
  TABLE_NAMES,
  batchEntryName,
  encodeRow,
  type ArchiveHeader,
  type ArchiveScope,
  type Manifest,
  type ManifestEntry,
  type TableSpec,
} from './archive-format.js';
import { INSTANCE_ACCOUNT_FILTERS, familyAccountFilters } from './accounts.js';
import { familyRowFilters, recordedObjects } from './repository.js';
import { ALL_ROWS, IN_LIST_CHUNK, readTable, type RowFilter } from './table-reader.js';

/**
 * Any SHA-256 in a stored document: a media reference, a cover's mediaUrl, an icon's id (as media
 * gc reads them). What a row names this way is a candidate only: it goes into a family's archive
 * when its readers may read it (see familyMedia).
 */
const HASH_IN_TEXT = /[0-9a-f]{64}/g;
/** Fixed, so that the same data gives the same archive bytes (see archive-format.ts). */
const ENTRY_TIME = new Date(0);

export interface ExportProgress {
  table: string;
  rows: number;
  mediaObjects: number;
}

export interface ExportOptions {
  progress?: (p: ExportProgress) => void;
  /**
   * A family archive as this member of the family may read it (`GET /user/family/export`): see
   * familyFilters. Left out, the family as the operator moves it, every member's rows.
   */
  reader?: string;
}

/**
 * Streams the archive of `scope` (archive-format.ts): the gzipped bytes come out of the stream
 * returned as they are made, read in pages (keyset pagination) and written with backpressure,
 * so that memory holds a page and a batch whatever the instance's size. A failure (the
 * database, a media object recorded but missing from the store) destroys the stream with the
 * error: a reader never mistakes a broken archive for a whole one (it has no manifest).
 */
export function exportArchive(store: Store, media: MediaStore, scope: ArchiveScope, opts: ExportOptions = {}): Readable {
  const pack = tar.pack();
  // Errors reach the caller through `out` (destroyed with them), not through this callback.
  const out = pipeline(pack, createGzip(), () => {});
  writeArchive(pack, store.db, media, scope, opts).catch((err: Error) => {
    pack.destroy(err);
    out.destroy(err);
  });
  return out;
}

async function writeArchive(
  pack: tar.Pack,
  db: Db,
  media: MediaStore,
  scope: ArchiveScope,
  { progress, reader }: ExportOptions,
): Promise<void> {
  const filters = scope.kind === 'instance' ? undefined : await familyFilters(db, scope.familyId, reader);
  const filterOf = (table: TableSpec): RowFilter => {
    if (!filters) return INSTANCE_ACCOUNT_FILTERS[table.name] ?? ALL_ROWS;
    // A table left out of familyFilters would otherwise put every user's rows in a family's archive.
    const filter = filters[table.name];
    if (!filter) throw new Error(`a family's archive has no filter for ${table.name}`);
    return filter;
  };
  const entries: ManifestEntry[] = [];
  const counts: Record<string, number> = {};
  const state: ExportProgress = { table: '', rows: 0, mediaObjects: 0 };

  const header: ArchiveHeader = { format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, scope, tables: TABLE_NAMES };
  const headerBytes = Buffer.from(`${JSON.stringify(header)}\n`);
  await putBuffer(pack, HEADER_ENTRY, headerBytes);
  entries.push({ name: HEADER_ENTRY, size: headerBytes.length, sha256: createHash('sha256').update(headerBytes).digest('hex') });

  // The bytes first: the importer stores them before it opens its transaction for the rows.
  const objects = TABLES[0]!;
  for await (const page of readTable(db, objects, filterOf(objects))) {
    for (const row of page) {
      const sha256 = String(row.sha256);
      const stat = await media.stat(sha256);
      if (!stat) throw new Error(`media object ${sha256} is recorded in the database, but its bytes are not in the media store`);
      const name = `${MEDIA_PREFIX}${sha256}`;
      await putStream(pack, name, stat.size, media.read(sha256));
      entries.push({ name, size: stat.size, sha256 });
      state.mediaObjects += 1;
    }
    progress?.(state);
  }

  for (const [tableIndex, table] of TABLES.entries()) {
    counts[table.name] = 0;
    state.table = table.name;
    let lines: string[] = [];
    let bytes = 0;
    let batch = 0;
    const flush = async (): Promise<void> => {
      if (lines.length === 0) return;
      batch += 1;
      const name = batchEntryName(tableIndex, batch);
      const buffer = Buffer.from(`${lines.join('\n')}\n`);
      await putBuffer(pack, name, buffer);
      entries.push({ name, size: buffer.length, sha256: createHash('sha256').update(buffer).digest('hex') });
      lines = [];
      bytes = 0;
    };
    for await (const page of readTable(db, table, filterOf(table))) {
      for (const row of page) {
        const line = encodeRow(table, row);
        lines.push(line);
        bytes += line.length;
        if (lines.length >= BATCH_ROWS || bytes >= BATCH_BYTES) await flush();
      }
      counts[table.name] = (counts[table.name] ?? 0) + page.length;
      state.rows += page.length;
      progress?.(state);
    }
    await flush();
  }

  const manifest: Manifest = { format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, scope, rows: counts, entries };
  await putBuffer(pack, MANIFEST_ENTRY, Buffer.from(`${JSON.stringify(manifest)}\n`));
  pack.finalize();
}

/** Resolves once the pack has taken the entry (its buffer below the high-water mark), rejects if it was destroyed. */
function putBuffer(pack: tar.Pack, name: string, buffer: Buffer): Promise<void> {
  return whileOpen(pack, (done) => {
    pack.entry({ name, size: buffer.length, mtime: ENTRY_TIME, mode: 0o644 }, buffer, done);
  });
}

function putStream(pack: tar.Pack, name: string, size: number, body: Readable): Promise<void> {
  return whileOpen(pack, (done) => {
    const sink = pack.entry({ name, size, mtime: ENTRY_TIME, mode: 0o644 }, done);
    body.once('error', (err) => done(err));
    body.pipe(sink);
  });
}

/** Runs `start`, settling with its callback, or with an error when the pack closes first (its reader went away). */
function whileOpen(pack: tar.Pack, start: (done: (err?: Error | null) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const closed = (): void => reject(new Error('the archive stream was closed'));
    pack.once('close', closed);
    start((err) => {
      pack.off('close', closed);
      if (err) reject(err);
      else resolve();
    });
  });
}

/**
 * The rows of one family's archive: the family, its memberships, devices, history, library
 * records, groups and images, and its members' MYO cards; then, for the operator (no `reader`),
 * every member's MYO cards, deleted ones included, wishlists, icons, uploads, media holdings and
 * links (with their card pairings); for a member (`reader`), what that member may read: the live
 * MYO cards of every member (as the library shows them) and the reader's own cards, wishlists,
 * icons, uploads, holdings and links, never another member's. With them the media objects (and
 * their transcodes) that these rows name and that their readers may read (familyMedia). Every
 * table has its filter here: writeArchive takes no table of a family's archive whole.
 */
async function familyFilters(db: Db, familyId: string, reader: string | undefined): Promise<Record<string, RowFilter>> {
  const members = memberIdsOf(db, familyId);
  const family = familyOwnerId(familyId);
  const { ofFamily, ofOwners, cards, holdings, linkCards } = familyRowFilters(familyId, family, members, reader);
  const hashes = await familyMedia(db, family, { cards, ofFamily, ofOwners, holdings });
  return {
    media_objects: { column: 'sha256', values: hashes },
    cards,
    families: ofFamily,
    family_memberships: ofFamily,
    family_devices: ofFamily,
    family_events: ofFamily,
    library_records: ofFamily,
    library_groups: ofFamily,
    wishlists: ofOwners,
    media_holdings: holdings,
    audio_uploads: ofOwners,
    transcodes: { column: 'source_sha256', values: hashes },
    display_icons: ofOwners,
    family_images: ofFamily,
    ...familyAccountFilters(members, reader),
    links: ofOwners,
    link_cards: linkCards,
  };
}

/**
 * The media objects a family archive carries: those its rows name (as media gc reads names) and
 * that the row's reader may read: public objects (covers, icons), and objects held by whom the
 * row speaks for, themselves or through their family (media/read-rights.ts says the same for
 * signed URLs): a card's or wishlist's owner, an icon's or upload's user, a holding's holder,
 * the family for its groups and images. A hash in a row that nobody it speaks for holds (another
 * user's upload named in one's own card) stays text. Then the transcodes of the sources taken.
 */
async function familyMedia(
  db: Db,
  family: string,
  filters: { cards: RowFilter; ofFamily: RowFilter; ofOwners: RowFilter; holdings: RowFilter },
): Promise<string[]> {
  /** For each hash named, whom the rows naming it speak for. */
  const named = new Map<string, Set<string>>();
  const note = (value: unknown, speaksFor: unknown): void => {
    if (typeof value !== 'string' || typeof speaksFor !== 'string') return;
    for (const hash of value.match(HASH_IN_TEXT) ?? []) named.set(hash, (named.get(hash) ?? new Set()).add(speaksFor));
  };
  const scan = async (table: string, filter: RowFilter, columns: string[], speaksFor: (row: Record<string, unknown>) => unknown): Promise<void> => {
    const spec = TABLES.find((t) => t.name === table)!;
    for await (const page of readTable(db, spec, filter)) {
      for (const row of page) for (const column of columns) note(row[column], speaksFor(row));
    }
  };
  await scan('cards', filters.cards, ['doc'], (row) => row.user_id);
  await scan('wishlists', filters.ofOwners, ['content'], (row) => row.user_id);
  await scan('library_groups', filters.ofFamily, ['image_id'], () => family);
  await scan('family_images', filters.ofFamily, ['image_id'], () => family);
  await scan('display_icons', filters.ofOwners, ['media_id'], (row) => row.user_id);
  await scan('audio_uploads', filters.ofOwners, ['source_sha256'], (row) => row.user_id);
  await scan('media_holdings', filters.holdings, ['sha256'], (row) => row.owner_id);

  const taken = new Set<string>();
  const speakers = [...new Set([...named.values()].flatMap((s) => [...s]))];
  for (const [hash, readers] of await readersAmong(db, named.keys(), speakers)) {
    if (readers.public || [...readers.holders].some((holder) => named.get(hash)?.has(holder))) taken.add(hash);
  }
  // A transcode's output goes with its source (a card names the output, a holding the source).
  const outputs = new Set<string>();
  const transcodes = TABLES.find((t) => t.name === 'transcodes')!;
  for await (const page of readTable(db, transcodes, { column: 'source_sha256', values: [...taken] })) {
    for (const row of page) if (typeof row.transcoded_sha256 === 'string' && !taken.has(row.transcoded_sha256)) outputs.add(row.transcoded_sha256);
  }
  // Only what is recorded (an output not yet stored is a job's text).
  const all = [...outputs].sort();
  for (let i = 0; i < all.length; i += IN_LIST_CHUNK) {
    for (const sha256 of await recordedObjects(db, all.slice(i, i + IN_LIST_CHUNK))) taken.add(sha256);
  }
  return [...taken];
}
