import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { signInOwners } from '../../src/db/migrations/007-sign-in-owners.js';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { oauthRecordRow } from '../support/rows.js';
import { testDialect } from '../support/test-database.js';

describe(`migration 007-sign-in-owners on ${testDialect()}`, { timeout: 60_000 }, () => {
  let deployment: Deployment | undefined;
  afterEach(async () => {
    await deployment?.close();
    deployment = undefined;
  });

  it("fills account_id and client_id of the engine's rows written before it, and goes down and up again", async () => {
    deployment = await createDeployment();
    const store = deployment.store();
    await migrateToLatest(store);
    const migration = signInOwners(store.dialect);
    await migration.down!(store.db);
    const row = (model: string, id: string, payload: object) => oauthRecordRow({ model, id, payload: JSON.stringify(payload) });
    await store.db
      .insertInto('oauth_records')
      .values([row('Grant', 'g1', { accountId: 'cardshelf|ann', clientId: 'app-one', iat: 1 }), row('Session', 's1', { uid: 'u' }), row('Client', 'app-one', { client_id: 'app-one' })])
      .execute();
    await migration.up(store.db);
    const rows = await store.db.selectFrom('oauth_records').select(['model', 'account_id', 'client_id']).orderBy('model').execute();
    expect(rows).toEqual([
      { model: 'Client', account_id: null, client_id: null },
      { model: 'Grant', account_id: 'cardshelf|ann', client_id: 'app-one' },
      { model: 'Session', account_id: null, client_id: null },
    ]);
    expect(await store.db.selectFrom('setup_links').selectAll().execute()).toEqual([]);
  });
});
