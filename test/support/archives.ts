import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { createGunzip, gzipSync } from 'node:zlib';
import tar from 'tar-stream';

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
