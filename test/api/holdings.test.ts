import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/dialect.js';
import { openStore } from '../../src/db/store.js';
import { heldCards, holds } from '../../src/modules/library/holdings.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { adminToken, catalogueCard, createCard, expectStatus, familyOf, mustAdd, newUser, putCatalogueCard, putFamily } from '../support/fixtures.js';

/**
 * The library-membership rule (`heldCards`, `holds`) on its own, against the database: what a
 * family library holds is the live catalogue cards added to it and the live MYO cards of everyone
 * in the family, with deletions and departures taken into account at the time of asking.
 */
describe('what a family library holds (library/holdings.ts)', () => {
  let t: TestApp;
  let store: Store;
  let familyId: string;
  const [parent, coparent, stranger] = [newUser('parent'), newUser('coparent'), newUser('stranger')];
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    store = openStore(t.config.database);
    familyId = await familyOf(t, [parent, coparent]);
    ids.parentMyo = (await createCard(t, parent)).cardId as string;
    ids.coparentMyo = (await createCard(t, coparent)).cardId as string;
    ids.deletedMyo = (await createCard(t, parent)).cardId as string;
    expectStatus(await t.call('DELETE', `/content/${ids.deletedMyo}`, { token: await t.token(parent) }), 200);
    ids.strangerMyo = (await createCard(t, stranger)).cardId as string;
    ids.free = await putCatalogueCard(t, 'free');
    ids.club = await putCatalogueCard(t, 'club');
    ids.notAdded = await putCatalogueCard(t, 'free');
    ids.withdrawn = await putCatalogueCard(t, 'free');
    for (const card of [ids.free, ids.club, ids.withdrawn]) await mustAdd(t, parent, card as string);
    // The operator withdraws a card that is in the library.
    const withdrawn = catalogueCard('Withdrawn', 'free', { deleted: true });
    expectStatus(await t.call('PUT', `/admin/cards/${ids.withdrawn}`, { token: await adminToken(t), body: withdrawn }), 200);
  });
  afterAll(async () => {
    await store.db.destroy();
    await t.close();
  });

  const held = async (query: Parameters<typeof heldCards>[2]) =>
    Object.fromEntries((await heldCards(store.db, familyId, query)).map((c) => [c.cardId, { inFamilyLibrary: c.inFamilyLibrary, deleted: c.deleted }]));

  it('holds the live catalogue cards added and every live MYO card of the members; nothing else', async () => {
    expect(await held({ form: 'summary' })).toEqual({
      [ids.free as string]: { inFamilyLibrary: true, deleted: false },
      [ids.club as string]: { inFamilyLibrary: true, deleted: false },
      [ids.parentMyo as string]: { inFamilyLibrary: false, deleted: false },
      [ids.coparentMyo as string]: { inFamilyLibrary: false, deleted: false },
    });
  });

  it('with includeDeleted also the records of withdrawn catalogue cards, never a deleted MYO card', async () => {
    const all = await held({ form: 'summary', includeDeleted: true });
    expect(all[ids.withdrawn as string]).toEqual({ inFamilyLibrary: true, deleted: true });
    expect(all[ids.deletedMyo as string]).toBeUndefined();
  });

  it('answers for given cards only, in either form, and holds() agrees card by card', async () => {
    const some = await heldCards(store.db, familyId, { form: 'doc', cardIds: [ids.free as string, ids.strangerMyo as string, ids.parentMyo as string] });
    expect(some.map((c) => c.cardId).sort()).toEqual([ids.free, ids.parentMyo].sort());
    for (const card of some) expect(JSON.parse(card.json).content.chapters).toBeDefined();
    const expected: Record<string, boolean> = {
      parentMyo: true,
      coparentMyo: true,
      free: true,
      club: true,
      deletedMyo: false,
      strangerMyo: false,
      notAdded: false,
      withdrawn: false,
    };
    for (const [name, isHeld] of Object.entries(expected)) {
      expect(await holds(store.db, familyId, ids[name] as string), name).toBe(isHeld);
    }
  });

  it('answers alike for lists of every length, duplicates and ids it does not hold included', async () => {
    // The compiled query takes its ids in slots of a power of two (padded), and a list past
    // 256 ids is built for itself: every length must answer the same set.
    const wanted = [ids.free, ids.club, ids.parentMyo, ids.coparentMyo] as string[];
    const unknown = (n: number): string[] => Array.from({ length: n }, (_, i) => `no-such-card-${i}`);
    for (const filler of [0, 1, 3, 4, 5, 124, 253, 300]) {
      for (let take = 1; take <= wanted.length; take++) {
        const asked = [...unknown(filler), ...wanted.slice(0, take), wanted[0] as string, ids.strangerMyo as string];
        const found = await heldCards(store.db, familyId, { form: 'summary', cardIds: asked });
        expect(found.map((c) => c.cardId).sort(), `${filler} + ${take}`).toEqual(wanted.slice(0, take).sort());
      }
    }
  });

  it('a member who leaves takes their MYO cards along; the records they added stay', async () => {
    expectStatus(await putFamily(t, familyId, { members: [{ userId: parent, approved: true }] }), 200);
    expect(await holds(store.db, familyId, ids.coparentMyo as string)).toBe(false);
    expect(await holds(store.db, familyId, ids.parentMyo as string)).toBe(true);
    expect(await holds(store.db, familyId, ids.free as string)).toBe(true);
  });
});
