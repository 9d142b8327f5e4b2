import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadOrCreateSigningKey, mintToken } from '../../src/auth/local-issuer.js';
import { loadConfig } from '../../src/config.js';
import type { Store } from '../../src/db/dialect.js';
import { openStore } from '../../src/db/store.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

/**
 * What several instances share, as docs/deploy.md sets it up: one database (a fresh PostgreSQL
 * database, or one SQLite file in a shared DATA_DIR) and one local-issuer key file.
 */
export interface Deployment {
  readonly database: TestDatabase;
  /** The environment of every instance. */
  readonly env: Readonly<Record<string, string>>;
  /** A token every instance accepts. */
  token(sub: string, scope?: string): Promise<string>;
  /** The store the instances use, opened from this process to check what they stored. */
  store(): Store;
  close(): Promise<void>;
}

export async function createDeployment(): Promise<Deployment> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-deploy-'));
  const database = await createTestDatabase();
  const env = {
    DATA_DIR: path.join(dir, 'data'),
    SIGNING_KEY_FILE: path.join(dir, 'shared', 'signing-key.json'),
    ...database.env,
  };
  const config = loadConfig(env);
  if (config.auth.mode !== 'local') throw new Error('a deployment under test uses the local issuer');
  const auth = config.auth;
  const key = await loadOrCreateSigningKey(auth.keyFile);
  let opened: Store | undefined;

  return {
    database,
    env,
    token: (sub, scope = 'user:content:manage family:library:manage') =>
      mintToken(key, { sub, scope, expiresIn: '1h', issuer: auth.issuer, audience: auth.audience }),
    store() {
      opened ??= openStore(config.database);
      return opened;
    },
    async close() {
      try {
        await opened?.db.destroy();
        await database.drop();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
