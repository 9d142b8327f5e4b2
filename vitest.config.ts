import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The integration suite (every test/**.test.ts outside test/unit/: test/api/, test/process/ and
 * test/browser/, README.md says which is which) runs once per database, as a project named after
 * it; unit tests run once. The integration pattern is all but unit on purpose: a file put in no
 * folder still runs. CARDSHELF_TEST_DBS picks the databases (`sqlite`, `postgres` or
 * `sqlite,postgres`). Unset, SQLite always runs, and PostgreSQL too when TEST_DATABASE_URL is
 * given or on CI (CI=true), where a missing TEST_DATABASE_URL then fails its tests rather than
 * leaving them out.
 */
const DATABASES = ['sqlite', 'postgres'] as const;
type Database = (typeof DATABASES)[number];

function selectedDatabases(env: NodeJS.ProcessEnv): Database[] {
  const raw = env.CARDSHELF_TEST_DBS?.trim();
  if (!raw) {
    const postgres = Boolean(env.TEST_DATABASE_URL) || env.CI === 'true';
    return postgres ? ['sqlite', 'postgres'] : ['sqlite'];
  }
  const names = [...new Set(raw.split(',').map((n) => n.trim()).filter(Boolean))];
  const unknown = names.filter((n) => !(DATABASES as readonly string[]).includes(n));
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(`CARDSHELF_TEST_DBS='${raw}': name databases among ${DATABASES.join(', ')}, comma-separated`);
  }
  return names as Database[];
}

const UNIT = 'test/unit/**/*.test.ts';

export default defineConfig({
  test: {
    // Each test file builds its own app on its own fresh database.
    pool: 'forks',
    // Three files at a time whatever the core count: vitest's default (cores - 1) is one on a
    // two-core machine, and these files mostly wait (on Chromium, child processes, the network,
    // the remote's poll intervals). On two cores, `npm test`'s vitest (SQLite) took 466 s with
    // two (the CPU busy 63% of it) and 392 s with three (77%), every test passing, no results cached.
    // CARDSHELF_TEST_WORKERS overrides it (.ci/run keeps two: it runs both databases, PostgreSQL
    // on the same cores).
    maxWorkers: Number(process.env.CARDSHELF_TEST_WORKERS) || 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true as const, test: { name: 'unit', include: [UNIT] } },
      ...selectedDatabases(process.env).map((database) => ({
        extends: true as const,
        test: {
          name: database,
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, UNIT],
          env: { CARDSHELF_TEST_DB: database },
          // src/ transpiled once for the processes these tests start (test/support/compiled-sources.ts).
          globalSetup: ['test/support/compiled-sources.ts'],
        },
      })),
    ],
  },
});
