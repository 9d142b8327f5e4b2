import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/db/store.js';
import type { Store } from '../src/db/dialect.js';
import { AlreadySeeded, scaleUserId, seedScale, type ScaleReport } from '../src/seed/scale.js';
import { startTestApp, type TestApp } from './helpers.js';

/**
 * `cardshelf seed --scale N` writes straight into the tables: what it writes must be what the
 * API reads, on every database.
 */
describe('seed --scale', () => {
  let t: TestApp;
  let store: Store;
  let report: ScaleReport;
  const opts = { users: 4, cardsPerUser: 6, catalogueCards: 12, prefix: 'test' };

  beforeAll(async () => {
    t = await startTestApp();
    store = openStore(t.config.database);
    report = await seedScale(store, opts, () => {});
  });
  afterAll(async () => {
    await store.db.destroy();
    await t.close();
  });

  it('reports what it wrote', async () => {
    const count = async (table: 'cards' | 'family_memberships' | 'library_records' | 'library_groups' | 'wishlists'): Promise<number> =>
      Number((await store.db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n);
    expect(report.users).toBe(opts.users);
    expect(await count('family_memberships')).toBe(opts.users);
    expect(await count('cards')).toBe(report.cards + opts.catalogueCards);
    expect(report.cards).toBeGreaterThanOrEqual(opts.users);
    expect(await count('library_records')).toBe(report.libraryRecords);
    expect(await count('library_groups')).toBe(report.groups);
    expect(await count('wishlists')).toBe(report.wishlists);
  });

  it.each([0, 1, 2, 3])('gives user %i cards, a family, a library, groups and wishlists the API serves', async (n) => {
    const userId = scaleUserId(opts.prefix, n);
    const token = await t.token(userId);
    const stored = await store.db
      .selectFrom('cards')
      .select(['card_id', 'deleted'])
      .where('user_id', '=', userId)
      .execute();
    expect(stored.length).toBeGreaterThanOrEqual(1);

    const mine = await t.call('GET', '/content/mine?showdeleted=true', { token });
    expect(mine.status).toBe(200);
    expect(mine.body.cards).toHaveLength(stored.length);
    for (const card of mine.body.cards) {
      expect(card.userId).toBe(userId);
      expect(card.content.chapters).toBeUndefined();
    }
    const live = stored.find((c) => c.deleted === 0);
    if (live) {
      const one = await t.call('GET', `/content/${live.card_id}`, { token });
      expect(one.status).toBe(200);
      expect(one.body.card.content.chapters.length).toBeGreaterThanOrEqual(1);
    }

    const family = await t.call('GET', '/user/family', { token });
    expect(family.status).toBe(200);
    expect(family.body.family.members).toEqual([expect.objectContaining({ userId, approved: true })]);
    expect(family.body.family.devices.length).toBeGreaterThanOrEqual(1);

    const library = await t.call('GET', '/card/family/library', { token });
    expect(library.status).toBe(200);
    const held = new Set(library.body.cards.map((c: { cardId: string }) => c.cardId));
    const groups = await t.call('GET', '/card/family/library/groups', { token });
    expect(groups.status).toBe(200);
    for (const group of groups.body) {
      expect(group.cards).toHaveLength(group.items.length);
      for (const item of group.items) expect(held.has(item.contentId)).toBe(true);
    }

    const wishlists = await t.call('GET', '/wishlists', { token });
    expect(wishlists.status).toBe(200);
    expect(wishlists.body.wishlists.length).toBeLessThanOrEqual(10);
  });

  it('refuses to seed the same prefix twice', async () => {
    await expect(seedScale(store, opts, () => {})).rejects.toBeInstanceOf(AlreadySeeded);
  });
});
