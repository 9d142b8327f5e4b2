import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { createGunzip, gunzipSync, gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { TABLES, batchEntryName, columnsOf } from '../../src/transfer/archive-format.js';

/** tar-stream's header encoder (not in its types), to write a header whose body follows in other gzip members. */
const tarHeaders = createRequire(import.meta.url)('tar-stream/headers.js') as {
  encode(header: { name: string; size: number; mode: number; mtime: Date; type: 'file'; uid: number; gid: number }): Buffer;
};

/** An archive's entries, in order, with their bytes. */
export interface Entry {
  name: string;
  data: Buffer;
}

export async function unpack(archive: Buffer): Promise<Entry[]> {
  const entries: Entry[] = [];
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    void buffer(stream).then((data) => {
      entries.push({ name: header.name, data });
      next();
    });
  });
  await pipeline(Readable.from([archive]), createGunzip(), extract);
  return entries;
}

/**
 * Packs entries again. With `fixManifest`, manifest.json is rewritten to list the entries as
 * they now are (sizes, SHA-256, row counts): an archive whose checksums hold, so that what
 * the importer refuses is the content itself.
 */
export async function repack(entries: Entry[], opts: { fixManifest?: boolean } = {}): Promise<Buffer> {
  let out = entries;
  if (opts.fixManifest) {
    const manifestAt = entries.findIndex((e) => e.name === 'manifest.json');
    const manifest = JSON.parse(entries[manifestAt]!.data.toString()) as { entries: unknown[]; rows: Record<string, number> };
    const before = entries.slice(0, manifestAt);
    manifest.entries = before.map((e) => ({ name: e.name, size: e.data.length, sha256: createHash('sha256').update(e.data).digest('hex') }));
    for (const table of Object.keys(manifest.rows)) {
      manifest.rows[table] = before
        .filter((e) => e.name.startsWith('tables/') && e.name.split('/')[1]!.slice(3) === table)
        .reduce((n, e) => n + e.data.toString().split('\n').length - 1, 0);
    }
    out = [...before, { name: 'manifest.json', data: Buffer.from(`${JSON.stringify(manifest)}\n`) }, ...entries.slice(manifestAt + 1)];
  }
  const pack = tar.pack();
  const done = buffer(pack);
  for (const e of out) {
    await new Promise<void>((resolve, reject) => pack.entry({ name: e.name, mtime: new Date(0) }, e.data, (err) => (err ? reject(err) : resolve())));
  }
  pack.finalize();
  return gzipSync(await done);
}

/** The rows of one table in an archive, parsed. */
export function rowsOf(entries: Entry[], table: string): Record<string, unknown>[] {
  return entries
    .filter((e) => e.name.startsWith('tables/') && e.name.split('/')[1]!.slice(3) === table)
    .flatMap((e) => e.data.toString().trimEnd().split('\n'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The order of each table's rows (archive-format.ts), to keep edited rows in key order. */
const ORDER: Record<string, string[]> = Object.fromEntries(TABLES.map((t) => [t.name, [...t.order]]));

function compareRows(table: string, a: Record<string, unknown>, b: Record<string, unknown>): number {
  for (const column of ORDER[table] ?? []) {
    const [x, y] = [a[column], b[column]];
    const order = typeof x === 'number' && typeof y === 'number' ? x - y : Buffer.compare(Buffer.from(String(x)), Buffer.from(String(y)));
    if (order !== 0) return order;
  }
  return 0;
}

/**
 * The entries with the rows of `table` replaced by `edit(rows)` (kept in key order, in one
 * batch entry, made if the table had none) and the manifest fixed: a hand-made archive whose
 * checksums hold. `sorted: false` keeps the rows in the order `edit` gives them.
 */
export async function editTable(
  entries: Entry[],
  table: string,
  edit: (rows: Record<string, unknown>[]) => Record<string, unknown>[],
  opts: { sorted?: boolean } = {},
): Promise<Entry[]> {
  const index = TABLES.findIndex((t) => t.name === table);
  const rows = edit(rowsOf(entries, table));
  if (opts.sorted !== false) rows.sort((a, b) => compareRows(table, a, b));
  const others = entries.filter((e) => !(e.name.startsWith('tables/') && e.name.split('/')[1]!.slice(3) === table));
  const batch = rows.length === 0 ? [] : [{ name: batchEntryName(index, 1), data: Buffer.from(`${rows.map((r) => JSON.stringify(r)).join('\n')}\n`) }];
  return fixed(others, batch);
}

/**
 * A row of `table` as an archive of this version holds it: `values` over every column of the
 * table's spec, a column not given null. Tests plant rows with it, so a column added to the
 * format changes none of them.
 */
export function archiveRow(table: string, values: Record<string, unknown>): Record<string, unknown> {
  const spec = TABLES.find((t) => t.name === table);
  if (!spec) throw new Error(`no archive table ${table}`);
  return { ...Object.fromEntries(spec.columns.map((c) => [c.name, null])), ...values };
}

/**
 * The rows of the archive's tables as format `version` wrote them: the columns added after it
 * left out (archive-format.ts, `since`). The header's version is the caller's to change.
 */
export async function withColumnsOf(entries: Entry[], version: number): Promise<Entry[]> {
  let edited = entries;
  for (const spec of TABLES) {
    const kept = new Set(columnsOf(spec, version).map((c) => c.name));
    if (kept.size === spec.columns.length || rowsOf(edited, spec.name).length === 0) continue;
    edited = await editTable(edited, spec.name, (rows) => rows.map((row) => Object.fromEntries(Object.entries(row).filter(([name]) => kept.has(name)))));
  }
  return edited;
}

/** The entries with media bytes added (a media entry and its media_objects row saying `contentType`). */
export async function addMedia(entries: Entry[], bytes: Buffer, contentType: string): Promise<{ entries: Entry[]; sha256: string }> {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const withBytes = await fixed(entries, [{ name: `media/${sha256}`, data: bytes }]);
  const row = { sha256, size: bytes.length, content_type: contentType, created_at: '2026-01-01T00:00:00.000Z' };
  return { entries: await editTable(withBytes, 'media_objects', (rows) => [...rows, row]), sha256 };
}

/** Entries in archive order (header, media by name, tables by name, manifest), `added` among them, the manifest fixed. */
async function fixed(entries: Entry[], added: Entry[]): Promise<Entry[]> {
  const all = [...entries, ...added];
  const named = (prefix: string) => all.filter((e) => e.name.startsWith(prefix)).sort((a, b) => (a.name < b.name ? -1 : 1));
  const ordered = [all.find((e) => e.name === 'cardshelf-archive.json')!, ...named('media/'), ...named('tables/'), all.find((e) => e.name === 'manifest.json')!];
  return unpack(await repack(ordered, { fixManifest: true }));
}

/**
 * A gzipped tar of `entries`, then an entry `name` of `size` spaces, then the end: made of
 * gzip members (a tar of the entries and the header; one MiB of spaces, the same member again
 * and again; the end), so that gigabytes of entry cost a few MB of archive and no time to make.
 */
export async function bomb(entries: Entry[], name: string, size: number): Promise<Buffer> {
  const MiB = 1024 * 1024;
  if (size % MiB !== 0) throw new Error('the size of a bomb is whole MiB');
  const tarred = gunzipSync(await repack(entries));
  const prefix = tarred.subarray(0, tarred.length - 1024); // without the end of archive
  const header = tarHeaders.encode({ name, size, mode: 0o644, mtime: new Date(0), type: 'file', uid: 0, gid: 0 });
  const spaces = gzipSync(Buffer.alloc(MiB, ' '));
  return Buffer.concat([gzipSync(Buffer.concat([prefix, header])), ...Array<Buffer>(size / MiB).fill(spaces), gzipSync(Buffer.alloc(1024))]);
}
