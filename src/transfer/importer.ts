import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Store } from '../db/dialect.js';
import type { Db } from '../db/unit-of-work.js';
import type { MediaStore } from '../media-store/media-store.js';
import { now } from '../shared/clock.js';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  BadRow,
  HEADER_ENTRY,
  MANIFEST_ENTRY,
  MAX_BATCH_ENTRY_BYTES,
  MAX_HEADER_BYTES,
  MAX_ROW_BYTES,
  MEDIA_PREFIX,
  TABLES,
  decodeRow,
  keyOf,
  maxManifestBytes,
  parseBatchEntryName,
  type ArchiveHeader,
  type ArchiveScope,
  type Manifest,
  type ManifestEntry,
  type Row,
  type TableSpec,
} from './archive-format.js';
import { asFamilyAccount } from './accounts.js';
import { EntryTooLarge, hashOf, readAll, readEntries, type ArchiveEntry } from './archive-reader.js';
import { RowRules, type MediaEntry } from './archive-rules.js';
import { SNIFF_BYTES, sniffType } from './media-type.js';
import { hasRows, keysWhereLeadIn } from './table-reader.js';
import { insertRows } from './table-writer.js';
import { ArchiveRefused, refuse } from './refusal.js';
import { SHA256_HEX } from '../media-store/media-store.js';
import { queuedTranscode } from '../modules/media/queries.js';

export { ArchiveRefused } from './refusal.js';

export interface Conflict {
  table: string;
  /** The key's columns and the value that is already taken in the target. */
  key: string;
  value: string;
}

/** Records of the archive collide with data already in the target: nothing was written. */
export class ImportConflicts extends Error {
  constructor(
    readonly total: number,
    readonly examples: Conflict[],
  ) {
    super(`${total} record${total === 1 ? '' : 's'} of the archive conflict with data already there`);
  }
}

export interface ImportOptions {
  /** Leave out the records that conflict (and the history of a family already there) instead of refusing. */
  skipConflicts: boolean;
  /** The largest media object taken: the larger of MEDIA_MAX_AUDIO_BYTES and MEDIA_MAX_IMAGE_BYTES. */
  maxMediaBytes: number;
  progress?: (line: string) => void;
}

export interface ImportReport {
  scope: ArchiveScope;
  /** Rows written, by table. */
  rows: Record<string, number>;
  /** Rows left out: conflicts skipped, and shared rows (media objects, transcodes) already there. */
  skipped: Record<string, number>;
  mediaObjects: number;
  seconds: number;
}

const MAX_EXAMPLES = 10;

/**
 * Imports an archive (archive-format.ts) in two passes over it (`open` gives a fresh stream
 * each time; the CLI reads the file twice). The first pass checks everything before anything
 * is written: the format and version, every entry's SHA-256 and size against the manifest,
 * every row, and the keys already taken in the target. The second pass stores the media
 * (content-addressed, so a copy already there is kept) and then writes all rows in one
 * transaction, batch by batch: a crash, a database error or an archive changed between the
 * passes rolls it back and leaves the target's rows as they were. Media bytes stored by an
 * import that then failed are named by nothing; `cardshelf media gc` removes them.
 */
export async function importArchive(
  store: Store,
  media: MediaStore,
  open: () => Readable,
  opts: ImportOptions,
): Promise<ImportReport> {
  const started = performance.now();
  const checked = await checkArchive(store.db, open(), opts);
  if (checked.conflicts.total > 0 && !opts.skipConflicts) {
    throw new ImportConflicts(checked.conflicts.total, checked.conflicts.examples);
  }
  const report = await writeArchive(store, media, open(), checked, opts);
  // Fresh statistics for the planner after a bulk load, as the scale seed does.
  await store.dialect.analyze(store.db);
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

interface Checked {
  header: ArchiveHeader;
  manifest: Manifest;
  /** Tables that held rows before the import: only those can conflict. */
  occupied: Set<string>;
  conflicts: { total: number; examples: Conflict[] };
}

/** Pass one: reads the whole archive, writes nothing. */
async function checkArchive(db: Db, source: Readable, opts: ImportOptions): Promise<Checked> {
  const pass = new FirstPass(db, opts, await occupiedTables(db));
  try {
    for await (const entry of readEntries(source)) await pass.read(entry);
  } catch (err) {
    if (err instanceof ArchiveRefused || err instanceof ImportConflicts) throw err;
    // Gzip and tar errors: the file is not a whole archive.
    throw new ArchiveRefused(`damaged archive: ${(err as Error).message}`);
  }
  return pass.finish();
}

/** Tables that hold rows before the import: only those can conflict. */
async function occupiedTables(db: Db): Promise<Set<string>> {
  const occupied = new Set<string>();
  for (const table of TABLES) {
    if (await hasRows(db, table.name)) occupied.add(table.name);
  }
  return occupied;
}

/** Pass one's checks, each a step: what an entry is decides which it gets, and finish checks the whole. */
class FirstPass {
  private header: ArchiveHeader | undefined;
  private manifest: Manifest | undefined;
  private rules: RowRules | undefined;
  /** The entries read, as the manifest must list them. */
  private readonly entries: ManifestEntry[] = [];
  /** The media bytes read, by SHA-256 (the row rules check media rows against them). */
  private readonly media = new Map<string, MediaEntry>();
  /** The SHA-256 of every media_objects row. */
  private readonly recorded = new Set<string>();
  /** Rows by table, as the batches hold them. */
  private readonly rows: Record<string, number> = {};
  private readonly conflicts: Checked['conflicts'] = { total: 0, examples: [] };
  private lastTable = -1;
  private lastBatch = 0;
  private lastReport = performance.now();
  /** The first bad record, reported once the archive is known not to be damaged. */
  private badRecord: ArchiveRefused | undefined;

  constructor(
    private readonly db: Db,
    private readonly opts: ImportOptions,
    private readonly occupied: Set<string>,
  ) {}

  async read(entry: ArchiveEntry): Promise<void> {
    if (this.manifest) refuse(`damaged archive: an entry (${entry.name}) follows the manifest`);
    if (!this.header) return this.readHeader(entry);
    if (entry.name === MANIFEST_ENTRY) return this.readManifest(entry);
    if (entry.name.startsWith(MEDIA_PREFIX)) return this.checkMedia(entry);
    return this.checkBatch(entry, this.header);
  }

  /** The checks of the archive as a whole, once it is read; its header and manifest as checked. */
  finish(): Checked {
    const { header, manifest } = this;
    if (!header) return refuse('not a Cardshelf archive: it is empty');
    if (!manifest) return refuse('damaged archive: it ends before its manifest (cut short?)');
    checkManifest(header, manifest, this.entries, this.rows);
    if (this.badRecord) throw this.badRecord;
    for (const sha256 of this.recorded) if (!this.media.has(sha256)) refuse(`damaged archive: media object ${sha256} has no bytes in it`);
    for (const sha256 of this.media.keys()) if (!this.recorded.has(sha256)) refuse(`damaged archive: media bytes ${sha256} have no media object row`);
    this.rules!.finish();
    return { header, manifest, occupied: this.occupied, conflicts: this.conflicts };
  }

  private async readHeader(entry: ArchiveEntry): Promise<void> {
    const read = await readHeader(entry);
    this.header = read.header;
    this.rules = new RowRules(this.db, read.header.scope, this.media);
    this.entries.push(await summarise(entry.name, read.raw));
  }

  private async readManifest(entry: ArchiveEntry): Promise<void> {
    // Bounded by what it lists (the entries before it) before a byte of it is read.
    this.manifest = parseJson(await readBounded(entry, maxManifestBytes(this.entries.length)), MANIFEST_ENTRY) as Manifest;
  }

  /** Media bytes: named by their SHA-256, before the tables, no larger than this instance stores, and hashing to their name. */
  private async checkMedia(entry: ArchiveEntry): Promise<void> {
    const sha256 = entry.name.slice(MEDIA_PREFIX.length);
    if (!SHA256_HEX.test(sha256)) refuse(`damaged archive: unexpected entry ${entry.name}`);
    if (this.lastTable >= 0) refuse(`damaged archive: media entry ${entry.name} after the tables`);
    if (entry.size > this.opts.maxMediaBytes) {
      refuse(`${entry.name} is ${entry.size} bytes, larger than this instance stores (MEDIA_MAX_AUDIO_BYTES, MEDIA_MAX_IMAGE_BYTES: ${this.opts.maxMediaBytes})`);
    }
    const actual = await hashOf(entry.body, SNIFF_BYTES);
    if (actual.sha256 !== sha256) refuse(`damaged archive: the bytes of ${entry.name} do not have that SHA-256`);
    this.media.set(sha256, { size: actual.size, sniffed: await sniffType(actual.start) });
    this.entries.push({ name: entry.name, size: actual.size, sha256 });
  }

  /** A batch of a table's rows: its place, its rows decoded and checked, the keys it would take. */
  private async checkBatch(entry: ArchiveEntry, header: ArchiveHeader): Promise<void> {
    const table = this.batchTable(entry);
    const buffer = await readBounded(entry, MAX_BATCH_ENTRY_BYTES);
    this.entries.push(await summarise(entry.name, buffer));
    // Counted even when a row is bad, so that damage (the manifest differs) is what is reported.
    this.rows[table.name] = (this.rows[table.name] ?? 0) + countLines(buffer);
    const decoded = this.decode(table, entry.name, buffer, header.version);
    if (!decoded) return;
    await this.checkRows(table, entry.name, decoded);
    if (table.name === 'media_objects') for (const row of decoded) this.recorded.add(String(row.sha256));
    await this.countConflicts(table, decoded);
    if (this.opts.progress && performance.now() - this.lastReport > 2000) {
      this.lastReport = performance.now();
      this.opts.progress(`import: checked ${this.entries.length} entries (${table.name})`);
    }
  }

  /** The table of a batch entry, whose name is a batch's and which comes next in order. */
  private batchTable(entry: ArchiveEntry): TableSpec {
    const batch = parseBatchEntryName(entry.name);
    if (!batch) return refuse(`damaged archive: unexpected entry ${entry.name}`);
    const { lastTable, lastBatch } = this;
    if (batch.tableIndex < lastTable || (batch.tableIndex === lastTable && batch.batch !== lastBatch + 1) || (batch.tableIndex > lastTable && batch.batch !== 1)) {
      refuse(`damaged archive: entry ${entry.name} is out of order`);
    }
    this.lastTable = batch.tableIndex;
    this.lastBatch = batch.batch;
    return TABLES[batch.tableIndex]!;
  }

  /** The rows of a batch, or none when one is bad (kept as badRecord). */
  private decode(table: TableSpec, name: string, buffer: Buffer, version: number): Row[] | undefined {
    try {
      return decodeBatch(table, name, buffer, version);
    } catch (err) {
      // A bad row is reported once the whole archive is known not to be damaged (a damaged
      // one is more often the reason, and its checksums say so only at the end).
      if (!(err instanceof ArchiveRefused)) throw err;
      this.badRecord ??= err;
      return undefined;
    }
  }

  /** Keys, references and scope: reported, like a bad row, once the archive is known whole. */
  private async checkRows(table: TableSpec, name: string, rows: Row[]): Promise<void> {
    if (this.badRecord) return;
    try {
      await this.rules!.check(table, name, rows);
    } catch (err) {
      if (!(err instanceof ArchiveRefused)) throw err;
      this.badRecord = err;
    }
  }

  /** Keys of the batch already taken in the target (a shared row already there is the same fact). */
  private async countConflicts(table: TableSpec, rows: Row[]): Promise<void> {
    if (!this.occupied.has(table.name) || table.shared) return;
    for (const conflict of await conflictsOf(this.db, table, rows)) {
      this.conflicts.total += 1;
      if (this.conflicts.examples.length < MAX_EXAMPLES) this.conflicts.examples.push(conflict);
    }
  }
}

async function readHeader(entry: ArchiveEntry): Promise<{ header: ArchiveHeader; raw: Buffer }> {
  if (entry.name !== HEADER_ENTRY) refuse(`not a Cardshelf archive: it starts with ${entry.name}, not ${HEADER_ENTRY}`);
  if (entry.size > MAX_HEADER_BYTES) refuse(`not a Cardshelf archive: ${HEADER_ENTRY} is too large`);
  const raw = await readAll(entry.body, MAX_HEADER_BYTES);
  const header = parseJson(raw, HEADER_ENTRY) as Partial<ArchiveHeader>;
  if (header.format !== ARCHIVE_FORMAT) refuse(`not a Cardshelf archive: its format is ${JSON.stringify(header.format)}`);
  const version = header.version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) return refuse('damaged archive: its format version is not a number');
  if (version > ARCHIVE_VERSION) {
    refuse(`the archive is of format version ${version}, newer than this Cardshelf reads (up to ${ARCHIVE_VERSION}): import it with a newer Cardshelf`);
  }
  const scope = header.scope;
  const scopeOk = scope?.kind === 'instance' || (scope?.kind === 'family' && typeof scope.familyId === 'string');
  if (!scopeOk || !Array.isArray(header.tables)) refuse(`damaged archive: ${HEADER_ENTRY} is incomplete`);
  return { header: header as ArchiveHeader, raw };
}

/** An entry's bytes, refused unread when its tar header states more than `maxBytes`. */
async function readBounded(entry: ArchiveEntry, maxBytes: number): Promise<Buffer> {
  const tooLarge = (): never => refuse(`damaged archive: ${entry.name} is ${entry.size} bytes, more than it can be (${maxBytes})`);
  if (entry.size > maxBytes) tooLarge();
  try {
    return await readAll(entry.body, maxBytes);
  } catch (err) {
    if (err instanceof EntryTooLarge) return tooLarge();
    throw err;
  }
}

function parseJson(buffer: Buffer, name: string): unknown {
  try {
    const value: unknown = JSON.parse(buffer.toString('utf8'));
    if (value === null || typeof value !== 'object') throw new Error('not an object');
    return value;
  } catch {
    return refuse(`damaged archive: ${name} is not a JSON object`);
  }
}

async function summarise(name: string, buffer: Buffer): Promise<ManifestEntry> {
  return { name, size: buffer.length, sha256: createHash('sha256').update(buffer).digest('hex') };
}

/** Line breaks in a batch: its rows, whatever they hold. */
function countLines(buffer: Buffer): number {
  let n = 0;
  for (let at = buffer.indexOf(10); at !== -1; at = buffer.indexOf(10, at + 1)) n += 1;
  return n;
}

function decodeBatch(table: TableSpec, name: string, buffer: Buffer, version: number): Row[] {
  const text = buffer.toString('utf8');
  if (!text.endsWith('\n')) refuse(`damaged archive: ${name} does not end with a line break`);
  const lines = text.slice(0, -1).split('\n');
  return lines.map((line, i) => {
    if (line.length > MAX_ROW_BYTES) refuse(`bad record in ${name}, line ${i + 1}: it is longer than a row can be (${MAX_ROW_BYTES} bytes)`);
    try {
      return decodeRow(table, line, version);
    } catch (err) {
      if (err instanceof BadRow) return refuse(`bad record in ${name}, line ${i + 1}: ${err.message}`);
      throw err;
    }
  });
}

function checkManifest(header: ArchiveHeader, manifest: Manifest, entries: ManifestEntry[], rows: Record<string, number>): void {
  if (manifest.format !== ARCHIVE_FORMAT || manifest.version !== header.version || JSON.stringify(manifest.scope) !== JSON.stringify(header.scope)) {
    refuse('damaged archive: the manifest does not match the archive header');
  }
  const listed = Array.isArray(manifest.entries) ? manifest.entries : [];
  if (listed.length !== entries.length) {
    refuse(`damaged archive: the manifest lists ${listed.length} entries, the archive has ${entries.length}`);
  }
  for (const [i, entry] of entries.entries()) {
    const expected = listed[i];
    if (expected?.name !== entry.name || expected.size !== entry.size || expected.sha256 !== entry.sha256) {
      refuse(`damaged archive: ${entry.name} is not what the manifest lists (its size or SHA-256 differs)`);
    }
  }
  for (const table of TABLES) {
    if ((manifest.rows?.[table.name] ?? 0) !== (rows[table.name] ?? 0)) {
      refuse(`damaged archive: the manifest counts ${manifest.rows?.[table.name] ?? 0} rows of ${table.name}, the archive has ${rows[table.name] ?? 0}`);
    }
  }
}

/** Keys of `rows` already taken in the target, one conflict per row and key. */
async function conflictsOf(db: Db, table: TableSpec, rows: Row[]): Promise<Conflict[]> {
  const out: Conflict[] = [];
  for (const key of table.keys) {
    const taken = await takenKeys(db, table, key, rows);
    for (const row of rows) {
      const value = keyOf(row, key);
      if (taken.has(value)) out.push({ table: table.name, key: key.join(', '), value });
    }
  }
  return out;
}

/** The values of `key` among `rows` that some row of the target has. */
async function takenKeys(db: Db, table: TableSpec, key: readonly string[], rows: Row[]): Promise<Set<string>> {
  const lead = key[0]!;
  const values = [...new Set(rows.map((r) => r[lead]))];
  if (values.length === 0) return new Set();
  const found = await keysWhereLeadIn(db, table.name, key, values);
  return new Set(found.map((r) => keyOf(r, key)));
}

/** Pass two: the media, then every row in one transaction. */
async function writeArchive(store: Store, media: MediaStore, source: Readable, checked: Checked, opts: ImportOptions): Promise<ImportReport> {
  const report: ImportReport = { scope: checked.header.scope, rows: {}, skipped: {}, mediaObjects: 0, seconds: 0 };
  const expected = checked.manifest.entries;
  let index = 0;
  /** The entry as pass one saw it, or a refusal: the file changed in between. */
  const same = (name: string, actual: { size: number; sha256: string }): void => {
    const e = expected[index];
    if (e?.name !== name || e.size !== actual.size || e.sha256 !== actual.sha256) {
      refuse(`the archive changed while it was being imported (${name}); nothing of its records was written`);
    }
    index += 1;
  };

  const iterator = readEntries(source);
  let next = await iterator.next();
  const advance = async (): Promise<void> => {
    next = await iterator.next();
  };
  try {
    if (next.done) return refuse('the archive changed while it was being imported');
    same(next.value.name, await summarise(next.value.name, await readAll(next.value.body, MAX_HEADER_BYTES)));
    await advance();

    // Media first, outside the transaction: content-addressed, so storing is idempotent.
    while (!next.done && next.value.name.startsWith(MEDIA_PREFIX)) {
      const entry = next.value;
      const sha256 = entry.name.slice(MEDIA_PREFIX.length);
      if (await media.stat(sha256)) {
        same(entry.name, await hashOf(entry.body));
      } else {
        const staged = await media.stage(entry.body, opts.maxMediaBytes);
        try {
          same(entry.name, staged);
          await staged.commit();
        } finally {
          await staged.discard();
        }
      }
      report.mediaObjects += 1;
      await advance();
    }

    const importedAt = now();
    await store.db.transaction().execute(async (trx) => {
      const skippedFamilies = new Set<string>();
      let lastReport = performance.now();
      let written = 0;
      while (!next.done && next.value.name !== MANIFEST_ENTRY) {
        const entry = next.value;
        const buffer = await readAll(entry.body, MAX_BATCH_ENTRY_BYTES);
        same(entry.name, await summarise(entry.name, buffer));
        const table = TABLES[parseBatchEntryName(entry.name)!.tableIndex]!;
        // The bytes are those pass one checked row by row (same SHA-256): parsing them is enough.
        const parsed = buffer.toString('utf8').slice(0, -1).split('\n').map((line) => JSON.parse(line) as Row);
        const incoming = checked.header.scope.kind === 'family' ? parsed.map((row) => asFamilyRow(table, row)) : parsed;
        const rows = await keep(trx, table, incoming, checked, opts, skippedFamilies);
        report.skipped[table.name] = (report.skipped[table.name] ?? 0) + rows.skipped;
        await insertRows(trx, table, rows.kept, table.onImport?.(importedAt));
        report.rows[table.name] = (report.rows[table.name] ?? 0) + rows.kept.length;
        written += rows.kept.length;
        if (opts.progress && performance.now() - lastReport > 2000) {
          lastReport = performance.now();
          opts.progress(`import: ${written.toLocaleString('en')} rows written (${table.name})`);
        }
        await advance();
      }
      if (next.done) refuse('the archive changed while it was being imported: its manifest is gone');
    });
  } finally {
    await iterator.return(undefined);
  }
  return report;
}

/**
 * The rows of a batch to insert. Shared rows already in the target are the same fact and are
 * left out; with skipConflicts, so are rows whose key is taken, and the history of a family
 * that was there already (its events would otherwise join another family's history).
 */
async function keep(
  trx: Db,
  table: TableSpec,
  rows: Row[],
  checked: Checked,
  opts: ImportOptions,
  skippedFamilies: Set<string>,
): Promise<{ kept: Row[]; skipped: number }> {
  if (!checked.occupied.has(table.name)) return { kept: rows, skipped: 0 };
  if (table.name === 'family_events') {
    const kept = rows.filter((r) => !skippedFamilies.has(String(r.family_id)));
    return { kept, skipped: rows.length - kept.length };
  }
  if (!table.shared && !opts.skipConflicts) return { kept: rows, skipped: 0 };
  const taken = await Promise.all(table.keys.map(async (key) => ({ key, values: await takenKeys(trx, table, key, rows) })));
  const kept = rows.filter((row) => !taken.some(({ key, values }) => values.has(keyOf(row, key))));
  if (table.name === 'families') {
    for (const row of rows) if (!kept.includes(row)) skippedFamilies.add(String(row.family_id));
  }
  return { kept, skipped: rows.length - kept.length };
}

/** A row of a family's archive as it is written: see queuedAnew and asFamilyAccount. */
function asFamilyRow(table: TableSpec, row: Row): Row {
  if (table.name === 'transcodes') return queuedAnew(row);
  if (table.name === 'accounts') return asFamilyAccount(row);
  return row;
}

/**
 * A family archive's transcode, as a job queued anew: the output a row names is the archive's
 * word, and a transcode row is shared by everyone who uploads the same source (the upload of a
 * popular file would be answered with the archive's audio). The source's bytes are in the
 * archive (archive-rules.ts), so the worker makes the output again.
 */
function queuedAnew(row: Row): Row {
  return queuedTranscode(row.source_sha256 as string, row.loudnorm as number, now());
}
