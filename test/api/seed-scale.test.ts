import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/store.js';
import type { Store } from '../../src/db/dialect.js';
import { AlreadySeeded, scaleUserId, seedScale, type ScaleReport } from '../../src/seed/scale.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

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

  it('writes what the services would: the same data made through the API reads back identically', async () => {
    const seeded = scaleUserId(opts.prefix, 0);
    const replayed = 'auth0|replayed-through-the-api';
    const admin = await t.token('auth0|operator', 'admin');
    const before = await readEverything(t, seeded);

    // Replay the seeded user's data as a client and an operator would make it, in the order made.
    const mine = [...(before.mine as CardLike[])].sort((x, y) => x.createdAt.localeCompare(y.createdAt));
    const madeAs = new Map<string, string>();
    const token = await t.token(replayed);
    const family = before.family as { family: { country: string; flags: object; members: Member[]; devices: { deviceId: string }[] } };
    const member = family.family.members[0] as Member;
    expectOk(
      await t.call('PUT', '/admin/families/replayedfamily', {
        token: admin,
        body: {
          country: family.family.country,
          flags: family.family.flags,
          members: [{ userId: replayed, approved: member.approved, verified: member.verified, verifiedEmail: member.verifiedEmail }],
          devices: family.family.devices.map((d) => ({ deviceId: `${d.deviceId}-replayed` })),
        },
      }),
    );
    for (const summary of mine) {
      const { cardId, ...card } = (before.cards as Record<string, CardLike>)[summary.cardId] as CardLike;
      const made = expectOk(await t.call('POST', '/content', { token, body: card }));
      madeAs.set(cardId, made.body.card.cardId);
      if (summary.deleted) expectOk(await t.call('DELETE', `/content/${made.body.card.cardId}`, { token }));
    }
    for (const held of (before.library as { cards: unknown[] }).cards as { cardId: string; inFamilyLibrary: boolean }[]) {
      if (held.inFamilyLibrary) expectOk(await t.call('POST', '/card/family/library', { token, body: { cardId: held.cardId } }));
    }
    for (const group of before.groups as { name: string; imageId: string; items: { contentId: string }[] }[]) {
      const items = group.items.map((i) => ({ contentId: madeAs.get(i.contentId) ?? i.contentId }));
      expectOk(await t.call('POST', '/card/family/library/groups', { token, body: { name: group.name, imageId: group.imageId, items } }));
    }
    for (const wishlist of before.wishlists as { content: unknown }[]) {
      expectOk(await t.call('POST', '/wishlists', { token, body: { content: wishlist.content } }));
    }

    const after = await readEverything(t, replayed);
    const seededIds = new Map(mine.map((c, i) => [c.cardId, `myo-${i}`]));
    const replayedIds = new Map(mine.map((c, i) => [madeAs.get(c.cardId) as string, `myo-${i}`]));
    expect(mine.length).toBeGreaterThan(0);
    expect(normalise(after, replayed, replayedIds)).toEqual(normalise(before, seeded, seededIds));
  });

  it('refuses to seed the same prefix twice', async () => {
    await expect(seedScale(store, opts, () => {})).rejects.toBeInstanceOf(AlreadySeeded);
  });
});

interface CardLike {
  cardId: string;
  createdAt: string;
  deleted?: boolean;
  [field: string]: unknown;
}

interface Member {
  approved: boolean;
  verified: boolean;
  verifiedEmail: string | null;
}

function expectOk<R extends { status: number; body?: unknown }>(reply: R): R {
  expect(reply.status, JSON.stringify(reply.body)).toBeLessThan(300);
  return reply;
}

/** Every read of the interface for one user: their cards (list and full), family, library, groups, wishlists. */
async function readEverything(t: TestApp, userId: string): Promise<Record<string, unknown>> {
  const token = await t.token(userId);
  const get = async (url: string): Promise<unknown> => expectOk(await t.call('GET', url, { token })).body;
  const mine = ((await get('/content/mine?showdeleted=true')) as { cards: CardLike[] }).cards;
  const cards: Record<string, unknown> = {};
  for (const card of mine) cards[card.cardId] = ((await get(`/content/${card.cardId}`)) as { card: unknown }).card;
  return {
    mine,
    cards,
    family: await get('/user/family'),
    library: await get('/card/family/library?view=groups'),
    groups: await get('/card/family/library/groups'),
    wishlists: ((await get('/wishlists')) as { wishlists: unknown[] }).wishlists,
  };
}

/** Generated values (ids, times, the user) made alike, MYO card ids renamed, arrays in one order. */
const GENERATED_IDS = new Set(['familyId', 'id', 'groupId', 'wishlistId', 'shareId', '_id', 'deviceId', 'imageUrl']);
function normalise(value: unknown, userId: string, cardIds: Map<string, string>, key = ''): unknown {
  if (Array.isArray(value)) {
    const items = value.map((v) => normalise(v, userId, cardIds));
    return items.sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== 'history')
        .map(([k, v]) => [cardIds.get(k) ?? k, normalise(v, userId, cardIds, k)]),
    );
  }
  if (typeof value !== 'string') return value;
  if (value === userId) return '<user>';
  if (cardIds.has(value)) return cardIds.get(value);
  if (key === 'at' || key.endsWith('At')) return '<time>';
  if (GENERATED_IDS.has(key)) return '<id>';
  return value;
}
