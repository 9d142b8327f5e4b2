import type { Command } from 'commander';
import type { Config } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import { openStore } from '../db/store.js';
import { openMediaStore } from '../media-store/open-media-store.js';
import { collectMediaGarbage } from '../modules/media/gc.js';
import { durationMs } from './option-parsers.js';
import { EXIT, err, type Run } from './run.js';

/** `cardshelf media gc`. */
export function mediaCommands(program: Command, run: Run): void {
  program
    .command('media')
    .description('stored media')
    .command('gc')
    .description('remove stored media nothing references, stored before the grace period; prints what it removed (or would remove) as JSON')
    .option('--grace <duration>', 'keep what was stored less than this long ago: 30m, 12h, 7d', durationMs, 7 * 86_400_000)
    .option('--dry-run', 'report what would be removed, remove nothing', false)
    .action(run(mediaGc));
}

interface MediaGcOptions {
  grace: number;
  dryRun: boolean;
}

async function mediaGc(config: Readonly<Config>, opts: MediaGcOptions): Promise<number> {
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
    const report = await collectMediaGarbage(store, openMediaStore(config.media), { graceMs: opts.grace, dryRun: opts.dryRun });
    err(`media gc: ${report.dryRun ? 'would remove' : 'removed'} ${report.removed.length} objects, ${report.bytes} bytes`);
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return EXIT.OK;
  } finally {
    await store.db.destroy();
  }
}
