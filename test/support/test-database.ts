import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Which database the integration suite runs on. vitest.config.ts runs the suite once per
 * database named in CARDSHELF_TEST_DBS, as one project each, and each project sets
 * CARDSHELF_TEST_DB for its test files.
 */
export type TestDialect = 'sqlite' | 'postgres';

export const TEST_DIALECTS: readonly TestDialect[] = ['sqlite', 'postgres'];

export function testDialect(): TestDialect {
  const name = process.env.CARDSHELF_TEST_DB ?? 'sqlite';
  if (!(TEST_DIALECTS as readonly string[]).includes(name)) {
    throw new Error(`CARDSHELF_TEST_DB is '${name}'; it must be one of ${TEST_DIALECTS.join(', ')}`);
  }
  return name as TestDialect;
}

/** A fresh, empty database for one app (or for several processes sharing it). */
export interface TestDatabase {
  readonly dialect: TestDialect;
  /**
   * Settings that point the app at it, merged over DATA_DIR: empty on SQLite (the database
   * file lives in DATA_DIR), DATABASE_URL on PostgreSQL.
   */
  readonly env: Readonly<Record<string, string>>;
  /** Removes the database; safe to call twice. */
  drop(): Promise<void>;
}

/**
 * The admin URL (a role that may create databases) from TEST_DATABASE_URL. Missing, the
 * PostgreSQL tests fail: they were asked for (CARDSHELF_TEST_DBS, or CI=true), so skipping
 * them would report a pass for tests that never ran.
 */
function adminUrl(): URL {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    throw new Error(
      'the postgres test project needs TEST_DATABASE_URL, the URL of a role that may create databases, ' +
        "e.g. postgres://cardshelf:cardshelf@127.0.0.1:5432/postgres (or run only SQLite: CARDSHELF_TEST_DBS=sqlite)",
    );
  }
  return new URL(url);
}

let created = 0;

export async function createTestDatabase(dialect: TestDialect = testDialect()): Promise<TestDatabase> {
  if (dialect === 'sqlite') return { dialect, env: {}, drop: async () => {} };

  const admin = adminUrl();
  created += 1;
  const name = `cardshelf_test_${process.pid}_${created}_${randomBytes(4).toString('hex')}`;
  await withAdmin(admin, async (client) => {
    try {
      // A linguistic collation on purpose, as many servers have by default: what sorts must
      // sort by the schema's own collation, not by the database's.
      await client.query(
        `create database "${name}" template template0 encoding 'UTF8' locale_provider icu icu_locale 'en-US'`,
      );
    } catch (err) {
      // A server built without ICU: fall back to the server's default collation.
      if (!['0A000', '42704', '22023'].includes((err as { code?: string }).code ?? '')) throw err;
      await client.query(`create database "${name}" template template0`);
    }
  });
  const url = new URL(admin);
  url.pathname = `/${name}`;

  let dropped = false;
  return {
    dialect,
    env: { DATABASE_URL: url.toString() },
    async drop() {
      if (dropped) return;
      dropped = true;
      // `force` ends connections a crashed or unclosed app left behind. It cannot end a server
      // process of a role ours is not a member of (an autovacuum worker, after a test that
      // wrote a lot): that one ends by itself shortly, so the drop is tried again.
      for (let attempt = 1; ; attempt++) {
        try {
          await withAdmin(admin, (client) => client.query(`drop database if exists "${name}" with (force)`));
          return;
        } catch (err) {
          if ((err as { code?: string }).code !== '42501' || attempt >= 10) throw err;
          await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
        }
      }
    },
  };
}

async function withAdmin<T>(url: URL, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
