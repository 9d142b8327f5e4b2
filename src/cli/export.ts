import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import type { Config } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import { openStore } from '../db/store.js';
import { openMediaStore } from '../media-store/open-media-store.js';
import type { ExportProgress } from '../transfer/exporter.js';
import { createTransferService } from '../transfer/service.js';
import { terminalProgress, transferDatabase } from './long-running.js';
import { familyId } from './option-parsers.js';
import { EXIT, Refused, err, type Run } from './run.js';

/** `cardshelf export`. */
export function exportCommand(program: Command, run: Run): void {
  program
    .command('export')
    .description('write everything, or one family, as one archive (a gzipped tar: the rows, the media, a manifest)')
    .option('--family <id>', 'only this family: its members, their MYO cards, library, groups, wishlists, history and media', familyId)
    .option('--out <file>', 'the archive to write (default: stdout, unless it is a terminal)')
    .action(run(exportArchive));
}

interface ExportOptions {
  family?: string;
  out?: string;
}

async function exportArchive(config: Readonly<Config>, opts: ExportOptions): Promise<number> {
  if (opts.out === undefined && process.stdout.isTTY) throw new Refused('export: stdout is a terminal; give --out FILE or redirect it');
  const store = openStore(transferDatabase(config.database));
  // Written beside the target and renamed when whole: a failed export leaves no half archive.
  const partial = opts.out === undefined ? undefined : `${opts.out}.partial`;
  try {
    await migrateToLatest(store);
    const transfer = createTransferService(store, openMediaStore(config.media));
    const line = terminalProgress();
    const progress = line && ((p: ExportProgress) => line(`export: ${p.mediaObjects} media objects, ${p.rows.toLocaleString('en')} rows (${p.table || 'media'})`));
    const archive = opts.family === undefined ? transfer.instanceArchive(progress) : await transfer.familyArchive(opts.family, progress);
    if (!archive) throw new Refused(`export: there is no family ${opts.family}`);
    await pipeline(archive, partial === undefined ? process.stdout : createWriteStream(partial));
    if (partial !== undefined && opts.out !== undefined) {
      await rename(partial, opts.out);
      err(`export: wrote ${opts.out} (${(await stat(opts.out)).size} bytes)`);
    }
    return EXIT.OK;
  } catch (e) {
    if (partial !== undefined) await rm(partial, { force: true });
    throw e;
  } finally {
    await store.db.destroy();
  }
}
