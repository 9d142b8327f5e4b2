/**
 * The database a run measures: a SQLite data directory (or PostgreSQL database) of its own,
 * seeded with `cardshelf seed`, counted and sized for the report, and removed after the run.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig, type Config } from '../src/config.js';
import { openStore } from '../src/db/store.js';
import { log } from './log.js';
import type { Options, StoreName } from './options.js';
import { runCardshelf } from './server.js';

export interface StoreSetup {
  env: NodeJS.ProcessEnv;
  config: Readonly<Config>;
  dataDir: string;
  cleanup(): Promise<void>;
  /** The database's size on disk, in bytes. */
  size(): Promise<number>;
}

/** A data directory (with PostgreSQL, a database too) and the server's environment, on `port`. */
export async function setupStore(opts: Options, store: StoreName, port: number): Promise<StoreSetup> {
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), `cardshelf-bench-${store}-`)));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: opts.logLevel,
    RATE_LIMIT_PER_MINUTE: '0',
  };
  delete env.DATABASE_URL;
  const removeDir = async (): Promise<void> => {
    if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
  };

  if (store === 'sqlite') {
    return {
      env,
      config: loadConfig(env),
      dataDir,
      cleanup: removeDir,
      async size() {
        let total = 0;
        for (const name of await readdir(dataDir)) {
          if (name.startsWith('cardshelf.db')) total += (await stat(path.join(dataDir, name))).size;
        }
        return total;
      },
    };
  }

  // PostgreSQL: a database of its own for the run when the role may create one, dropped after.
  const adminUrl = process.env.DATABASE_URL as string;
  const dbName = `cardshelf_bench_${Date.now().toString(36)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  let url = adminUrl;
  let created = false;
  try {
    await client.query(`create database ${dbName}`);
    const u = new URL(adminUrl);
    u.pathname = `/${dbName}`;
    url = u.toString();
    created = true;
  } catch (e) {
    log(`postgres: cannot create a database of its own (${(e as Error).message}); using DATABASE_URL as it is`);
  } finally {
    await client.end();
  }
  env.DATABASE_URL = url;
  return {
    env,
    config: loadConfig(env),
    dataDir,
    async cleanup() {
      await removeDir();
      if (!created) return;
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists ${dbName} with (force)`);
      } finally {
        await c.end();
      }
    },
    async size() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const r = await c.query<{ n: string }>('select pg_database_size(current_database()) as n');
        return Number(r.rows[0]?.n ?? 0);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * Seeds the database (`cardshelf seed --scale N`) unless --data-dir holds one already: the
 * seconds the seed took, or null when this run did not seed it.
 */
export async function seedStore(opts: Options, store: StoreName, setup: StoreSetup, root?: string): Promise<number | null> {
  const hasDb = store === 'sqlite' && opts.dataDir !== undefined && (await readdir(setup.dataDir).catch((): string[] => [])).includes('cardshelf.db');
  if (hasDb) {
    log(`${store}: using the database in ${setup.dataDir} as it is`);
    return null;
  }
  log(`${store}: seeding ${opts.scale} users (cardshelf seed --scale ${opts.scale})`);
  const t0 = performance.now();
  const code = await runCardshelf(opts, setup.env, ['seed', '--scale', String(opts.scale)], root);
  if (code === 2) {
    log(`${store}: the database was seeded already; using it as it is`);
    return null;
  }
  if (code !== 0) throw new Error(`cardshelf seed exited with ${code}`);
  return Math.round((performance.now() - t0) / 100) / 10;
}

export interface DatasetCounts {
  users: number;
  cards: number;
  libraryRecords: number;
  groups: number;
  wishlists: number;
  events: number;
}

export async function countDataset(config: Readonly<Config>): Promise<DatasetCounts> {
  const store = openStore(config.database);
  try {
    const count = async (table: 'family_memberships' | 'cards' | 'library_records' | 'library_groups' | 'wishlists' | 'family_events'): Promise<number> => {
      const r = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(store.db);
      return Number(r.rows[0]?.n ?? 0);
    };
    return {
      users: await count('family_memberships'),
      cards: await count('cards'),
      libraryRecords: await count('library_records'),
      groups: await count('library_groups'),
      wishlists: await count('wishlists'),
      events: await count('family_events'),
    };
  } finally {
    await store.db.destroy();
  }
}
