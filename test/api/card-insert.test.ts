import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/dialect.js';
import { openStore } from '../../src/db/store.js';
import { buildCardDoc, cardRow } from '../../src/modules/cards/card-document.js';
import { insertCard } from '../../src/modules/cards/repository.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/**
 * A card's insert tells whether the id was free: a create draws another id when it was taken
 * (cards/service.ts), so a taken id must answer false and change nothing.
 */
describe('inserting a card (cards/repository.ts)', () => {
  let t: TestApp;
  let store: Store;

  beforeAll(async () => {
    t = await startTestApp();
    store = openStore(t.config.database);
  });
  afterAll(async () => {
    await store.db.destroy();
    await t.close();
  });

  const row = (title: string) =>
    cardRow(
      buildCardDoc({ title }, { cardId: 'Taken', userId: 'auth0|insert-test', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', deleted: false }),
      'myo',
    );

  it('answers true for a free id, and false for a taken one without changing the card', async () => {
    expect(await insertCard(store.db, row('First'))).toBe(true);
    expect(await insertCard(store.db, row('Second'))).toBe(false);
    const stored = await store.db.selectFrom('cards').select('doc').where('card_id', '=', 'Taken').execute();
    expect(stored).toHaveLength(1);
    expect(JSON.parse(stored[0]!.doc).title).toBe('First');
  });
});
