import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { App } from '../../src/http/route-app.js';
import { READINESS_REUSE_MS } from '../../src/db/readiness.js';
import { openStore } from '../../src/db/store.js';
import type { Store } from '../../src/db/dialect.js';
import { createTestDatabase, testDialect, type TestDatabase } from '../support/test-database.js';

/**
 * Row 12 of issue 17: `GET /readyz`, which anyone may call, wrote a row on every call. The app
 * is built on a store whose every statement is seen here, to count the probe's writes.
 */
let app: App;
let opened: Store;
let database: TestDatabase;
let dataDir: string;
let probeWrites = 0;

const countProbeWrites: KyselyPlugin = {
  transformQuery({ node }) {
    if (node.kind === 'InsertQueryNode' && node.into?.table.identifier.name === 'readiness_probe') probeWrites += 1;
    return node;
  },
  transformResult: async ({ result }) => result,
};

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'cardshelf-ready-'));
  database = await createTestDatabase();
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...database.env });
  opened = openStore(config.database);
  app = await buildApp(config, { store: { ...opened, db: opened.db.withPlugin(countProbeWrites) } });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await opened?.db.destroy();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe(`GET /readyz on ${testDialect()}`, () => {
  it('answers 100 calls, at once and one after another, with at most two probe writes', async () => {
    const readyz = () => app.inject({ method: 'GET', url: '/readyz' });
    const together = await Promise.all(Array.from({ length: 50 }, readyz));
    const statuses = together.map((r) => r.statusCode);
    for (let i = 0; i < 50; i++) statuses.push((await readyz()).statusCode);
    expect(statuses).toEqual(Array(100).fill(200));
    expect(probeWrites).toBeGreaterThanOrEqual(1);
    expect(probeWrites).toBeLessThanOrEqual(2);

    // Once the last success is older than the reuse period, the next call writes again.
    const before = probeWrites;
    await sleep(READINESS_REUSE_MS + 200);
    expect((await readyz()).statusCode).toBe(200);
    expect(probeWrites).toBe(before + 1);
  });
});
