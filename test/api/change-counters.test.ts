import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { bumpCounters, familyScope, readCounters, scopes, type FamilyScope } from '../../src/db/change-counters.js';
import type { Store } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openStore } from '../../src/db/store.js';
import { familyIdOfCounted, findFamilyOfUserCounted, insertFamily, insertMembership } from '../../src/modules/families/repository.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * The change counters a query that finds a family selects with it (selectCounters), against
 * those read on their own (readCounters): the tags built from either must agree.
 */
describe('change counters read with the family', () => {
  let database: TestDatabase;
  let dataDir: string;
  let store: Store;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(tmpdir(), 'cardshelf-counters-'));
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...database.env });
    store = openStore(config.database);
    await migrateToLatest(store);
    const at = new Date(0).toISOString();
    for (const [familyId, userId] of [['fam-a', 'auth0|a'], ['fam-b', 'auth0|b']] as const) {
      await insertFamily(store.db, { family_id: familyId, country: 'GB', flags: '{}', created_at: at, updated_at: at });
      await insertMembership(store.db, {
        user_id: userId,
        family_id: familyId,
        listed: 1,
        added_at: at,
        approved: 1,
        approved_at: at,
        verified: 0,
        verified_email: null,
        position: 0,
      });
    }
    await bumpCounters(store.db, [scopes.family('fam-a')]);
    await bumpCounters(store.db, [scopes.family('fam-a'), scopes.catalogue, scopes.groups('fam-b')]);
  });

  afterAll(async () => {
    await store?.db.destroy();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const alone = (familyId: string, wanted: FamilyScope[]): Promise<number[]> =>
    readCounters(store.db, wanted.map((kind) => familyScope(kind, familyId)));

  it.each<{ wanted: FamilyScope[] }>([
    { wanted: ['family', 'groups', 'catalogue'] },
    { wanted: ['catalogue', 'family'] },
    { wanted: ['groups'] },
    { wanted: ['family'] },
  ])('selects the counters of $wanted in their order, as read alone, for each family', async ({ wanted }) => {
    const a = await familyIdOfCounted(store.db, 'auth0|a', wanted);
    const b = await familyIdOfCounted(store.db, 'auth0|b', wanted);
    expect(a).toEqual({ familyId: 'fam-a', counters: await alone('fam-a', wanted) });
    expect(b).toEqual({ familyId: 'fam-b', counters: await alone('fam-b', wanted) });
  });

  it('gives 2, 0 and 1 for scopes written twice, never and once', async () => {
    expect(await familyIdOfCounted(store.db, 'auth0|a', ['family', 'groups', 'catalogue'])).toEqual({
      familyId: 'fam-a',
      counters: [2, 0, 1],
    });
  });

  it('reads the counters now, not those of when the query was compiled', async () => {
    const before = await findFamilyOfUserCounted(store.db, 'auth0|b', ['family', 'groups']);
    await bumpCounters(store.db, [scopes.family('fam-b'), scopes.groups('fam-b')]);
    const after = await findFamilyOfUserCounted(store.db, 'auth0|b', ['family', 'groups']);
    expect(before?.counters).toEqual([0, 1]);
    expect(after?.counters).toEqual([1, 2]);
    expect(after?.row).toEqual({ family_id: 'fam-b', country: 'GB', flags: '{}', created_at: new Date(0).toISOString(), updated_at: new Date(0).toISOString() });
  });

  it('finds nothing for a user without a family', async () => {
    expect(await familyIdOfCounted(store.db, 'auth0|nobody', ['family'])).toBeUndefined();
    expect(await findFamilyOfUserCounted(store.db, 'auth0|nobody', ['family'])).toBeUndefined();
  });
});
