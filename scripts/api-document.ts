/**
 * The OpenAPI document the server serves at /openapi.json: the app is built on a throwaway
 * SQLite database with the default settings and asked for it, exactly as a client would.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

export async function readApiDocument(): Promise<Record<string, unknown>> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'cardshelf-openapi-'));
  try {
    const app = await buildApp(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
    const res = await app.inject('/openapi.json');
    await app.close();
    if (res.statusCode !== 200) throw new Error(`/openapi.json answered ${res.statusCode}`);
    return JSON.parse(res.body) as Record<string, unknown>;
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
