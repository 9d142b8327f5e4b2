// Runs the migrations (as `cardshelf migrate` and `cardshelf serve` do) on a signal, so that
// processes which took different times to start still migrate at the same moment: it prints
// `ready` once connected, waits for a line on stdin, migrates, and prints
// {"startedAt", "endedAt", "applied": [names]} as one JSON line.
import { once } from 'node:events';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openStore } from '../../src/db/store.js';

const store = openStore(loadConfig().database);
try {
  await sql`select 1`.execute(store.db);
  process.stdout.write('ready\n');
  await once(process.stdin, 'data');
  const startedAt = Date.now();
  const { results = [] } = await migrateToLatest(store);
  const applied = results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
  process.stdout.write(`${JSON.stringify({ startedAt, endedAt: Date.now(), applied })}\n`);
} finally {
  process.stdin.destroy();
  await store.db.destroy();
}
