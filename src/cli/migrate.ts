import type { Command } from 'commander';
import type { Config } from '../config.js';
import { migrateToLatest } from '../db/migrate.js';
import { openStore } from '../db/store.js';
import { EXIT, err, type Run } from './run.js';

/** `cardshelf migrate`. */
export function migrateCommand(program: Command, run: Run): void {
  program
    .command('migrate')
    .description('apply pending database migrations (the server also does on start)')
    .action(run(migrate));
}

async function migrate(config: Readonly<Config>): Promise<number> {
  const store = openStore(config.database);
  try {
    const { results = [] } = await migrateToLatest(store);
    if (results.length === 0) err('migrations: already up to date');
    for (const r of results) err(`migration ${r.migrationName}: ${r.status}`);
    return EXIT.OK;
  } finally {
    await store.db.destroy();
  }
}
