import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import type { Config } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import { openStore } from '../db/store.js';
import { openMediaStore } from '../media-store/open-media-store.js';
import { ArchiveRefused, ImportConflicts } from '../transfer/importer.js';
import { createTransferService } from '../transfer/service.js';
import { terminalProgress, transferDatabase } from './long-running.js';
import { EXIT, Refused, err, type Run } from './run.js';

/** `cardshelf import`. */
export function importCommand(program: Command, run: Run): void {
  program
    .command('import')
    .description('load an archive into the configured database and media store; a damaged archive, a newer format or ids already taken are refused before anything is written')
    .argument('<file>', 'the archive, as cardshelf export wrote it')
    .option('--skip-conflicts', 'leave out the records whose ids are taken already (and the history of a family already there) instead of refusing', false)
    .action(run(importArchive));
}

async function importArchive(config: Readonly<Config>, file: string, opts: { skipConflicts: boolean }): Promise<number> {
  if (!(await stat(file).catch(() => undefined))?.isFile()) throw new Refused(`import: ${file} is not a file`);
  const store = openStore(transferDatabase(config.database));
  try {
    await migrateToLatest(store);
    const transfer = createTransferService(store, openMediaStore(config.media));
    const report = await transfer.importArchive(() => createReadStream(file), {
      skipConflicts: opts.skipConflicts,
      maxMediaBytes: Math.max(config.media.maxAudioBytes, config.media.maxImageBytes),
      progress: terminalProgress(),
    });
    const total = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);
    const written = Object.entries(report.rows).filter(([, n]) => n > 0).map(([table, n]) => `${table} ${n}`).join(', ');
    err(
      `import: ${total(report.rows)} rows written in ${report.seconds.toFixed(1)} s (${written || 'none'}), ` +
        `${report.mediaObjects} media objects, ${total(report.skipped)} rows left out`,
    );
    return EXIT.OK;
  } catch (e) {
    if (e instanceof ArchiveRefused) throw new Refused(`import: ${e.message}; nothing was written`);
    if (e instanceof ImportConflicts) {
      const examples = e.examples.map((c) => `${c.table} (${c.key}) ${c.value}`).join('; ');
      throw new Refused(
        `import: ${e.message} (${examples}${e.total > e.examples.length ? '; ...' : ''}); nothing was written. ` +
          'Give --skip-conflicts to import the rest.',
      );
    }
    throw e;
  } finally {
    await store.db.destroy();
  }
}
