import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody, errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import {
  ISO_MS,
  MANAGE,
  VIEW,
  controlledClock,
  createCard,
  expectStatus,
  familyIdOf,
  familyOf,
  mustAdd,
  newUser,
  putCatalogueCard,
} from '../support/fixtures.js';

const BASE = '/card/family/library/groups';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

interface Group {
  id: string;
  familyId: string;
  name: string;
  imageId: string;
  imageUrl: string;
  items: { contentId: string; addedAt: string }[];
  cards: Record<string, any>[];
  createdAt: string;
  lastModifiedAt: string;
}

async function createGroup(userId: string, body: unknown): Promise<Reply> {
  return t.call('POST', BASE, { token: await t.token(userId, MANAGE), body });
}
async function mustCreate(userId: string, body: Record<string, unknown>): Promise<Group> {
  return expectStatus(await createGroup(userId, { imageId: 'img', items: [], ...body }), 201).body;
}
async function getGroup(userId: string, groupId: string): Promise<Reply> {
  return t.call('GET', `${BASE}/${groupId}`, { token: await t.token(userId, VIEW) });
}
async function putGroup(userId: string, groupId: string, body: unknown): Promise<Reply> {
  return t.call('PUT', `${BASE}/${groupId}`, { token: await t.token(userId, MANAGE), body });
}
async function deleteGroup(userId: string, groupId: string): Promise<Reply> {
  return t.call('DELETE', `${BASE}/${groupId}`, { token: await t.token(userId, MANAGE) });
}
async function listGroups(userId: string): Promise<Group[]> {
  return expectStatus(await t.call('GET', BASE, { token: await t.token(userId, VIEW) }), 200).body;
}
async function fullCard(userId: string, cardId: string): Promise<Record<string, any>> {
  return expectStatus(await t.call('GET', `/card/${cardId}`, { token: await t.token(userId, '') }), 200).body.card;
}

/** A user whose (own) family library holds `n` cards (free and club alternately); returns their ids. */
async function userWithLibrary(n: number, name = 'grp'): Promise<{ user: string; cards: string[] }> {
  const user = newUser(name);
  const cards: string[] = [];
  for (let i = 0; i < n; i++) {
    const cardId = await putCatalogueCard(t, i % 2 ? 'club' : 'free', { title: `Card ${i}` });
    await mustAdd(t, user, cardId);
    cards.push(cardId);
  }
  return { user, cards };
}

const expectedImageUrl = (imageId: string): string =>
  t.config.groupImageUrlTemplate.replaceAll('{imageId}', encodeURIComponent(imageId));

describe('POST /card/family/library/groups', () => {
  it('creates a group: 201 with the group and the full cards of its items, in item order', async () => {
    const { user, cards } = await userWithLibrary(3);
    const familyId = await familyIdOf(t, user);
    const before = Date.now();
    const r = expectStatus(
      await createGroup(user, {
        name: 'Bedtime',
        imageId: 'moon-01',
        items: [{ contentId: cards[2] }, { contentId: cards[0] }],
      }),
      201,
    );
    const g: Group = r.body;
    expect(Object.keys(g).sort()).toEqual(
      ['cards', 'createdAt', 'familyId', 'id', 'imageId', 'imageUrl', 'items', 'lastModifiedAt', 'name'].sort(),
    );
    expect(g.id).toMatch(/^\S+$/);
    expect(g.familyId).toBe(familyId);
    expect(g.name).toBe('Bedtime');
    expect(g.imageId).toBe('moon-01');
    expect(g.imageUrl).toBe(expectedImageUrl('moon-01'));
    expect(g.imageUrl).toContain('moon-01');
    expect(g.items).toEqual([
      { contentId: cards[2], addedAt: expect.stringMatching(ISO_MS) },
      { contentId: cards[0], addedAt: expect.stringMatching(ISO_MS) },
    ]);
    expect(g.createdAt).toMatch(ISO_MS);
    expect(Date.parse(g.createdAt)).toBeGreaterThanOrEqual(before - 5);
    expect(Date.parse(g.createdAt)).toBeLessThanOrEqual(Date.now() + 5);
    expect(g.lastModifiedAt).toBe(g.createdAt);
    expect(g.items[0]?.addedAt).toBe(g.createdAt);

    expect(g.cards.map((c) => c.cardId)).toEqual([cards[2], cards[0]]);
    expect(g.cards[0]).toEqual(await fullCard(user, cards[2]!));
    expect(g.cards[1]).toEqual(await fullCard(user, cards[0]!));
    for (const card of g.cards) {
      expect(card.content.chapters).toHaveLength(1);
      expect(card.content.chapters[0].tracks[0].trackUrl).toBe('service:#abc123');
    }
  });

  it('accepts a group without items, and with items left out', async () => {
    const user = newUser('noitems');
    const empty = await mustCreate(user, { name: 'Empty', items: [] });
    expect(empty.items).toEqual([]);
    expect(empty.cards).toEqual([]);
    const r = expectStatus(await createGroup(user, { name: 'No items', imageId: 'x' }), 201);
    expect(r.body.items).toEqual([]);
    expect(r.body.cards).toEqual([]);
  });

  it('keeps the order of items, drops duplicates, and drops cards not in the family library', async () => {
    const { user, cards } = await userWithLibrary(3);
    const outside = await putCatalogueCard(t, 'free'); // exists, but not in this library
    const g = await mustCreate(user, {
      name: 'Mixed',
      items: [
        { contentId: cards[1] },
        { contentId: outside },
        { contentId: cards[0] },
        { contentId: cards[1] },
        { contentId: 'nope1' },
        { contentId: cards[2] },
        { contentId: cards[0] },
      ],
    });
    expect(g.items.map((i) => i.contentId)).toEqual([cards[1], cards[0], cards[2]]);
    expect(g.cards.map((c) => c.cardId)).toEqual([cards[1], cards[0], cards[2]]);
  });

  it("drops a card that is in another family's library", async () => {
    const { cards: theirs } = await userWithLibrary(1, 'other');
    const { user, cards: mine } = await userWithLibrary(1, 'mine');
    const g = await mustCreate(user, { name: 'Only mine', items: [{ contentId: theirs[0] }, { contentId: mine[0] }] });
    expect(g.items.map((i) => i.contentId)).toEqual([mine[0]]);
  });

  it('cuts the name to 100 characters', async () => {
    const user = newUser('longname');
    const long = 'abcdefghij'.repeat(15);
    const g = await mustCreate(user, { name: long });
    expect(g.name).toBe(long.slice(0, 100));
    expect(g.name).toHaveLength(100);
    const exact = 'x'.repeat(100);
    expect((await mustCreate(user, { name: exact })).name).toBe(exact);
    // characters, not UTF-16 units: an emoji is not split in half
    const emoji = '🎵'.repeat(120);
    const e = await mustCreate(user, { name: emoji });
    expect(Array.from(e.name)).toHaveLength(100);
    expect(e.name).toBe('🎵'.repeat(100));
  });

  it.each([
    ['no name', { imageId: 'i' }],
    ['an empty name', { name: '', imageId: 'i' }],
    ['a blank name', { name: '   ', imageId: 'i' }],
    ['a numeric name', { name: 42, imageId: 'i' }],
    ['a null name', { name: null, imageId: 'i' }],
    ['no imageId', { name: 'n' }],
    ['an empty imageId', { name: 'n', imageId: '' }],
    ['a numeric imageId', { name: 'n', imageId: 7 }],
    ['items not an array', { name: 'n', imageId: 'i', items: 'abc' }],
    ['an item without contentId', { name: 'n', imageId: 'i', items: [{}] }],
    ['an item with a numeric contentId', { name: 'n', imageId: 'i', items: [{ contentId: 5 }] }],
    ['an item that is a string', { name: 'n', imageId: 'i', items: ['abcde'] }],
  ])('refuses %s: 400 bad-request, and creates nothing', async (_what, body) => {
    const user = newUser('bad');
    const r = await createGroup(user, body);
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
    expect(await listGroups(user)).toEqual([]);
  });

  it('refuses the 21st group of a family: 400 group-limit', async () => {
    const alice = newUser('alice');
    const bob = newUser('bob');
    await familyOf(t, [alice, bob]);
    for (let i = 0; i < 20; i++) await mustCreate(i % 2 ? alice : bob, { name: `G${i}` });
    const r = await createGroup(alice, { name: 'one too many', imageId: 'i', items: [] });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('group-limit');
    const groups = await listGroups(bob);
    expect(groups).toHaveLength(20);
    expect(groups.map((g) => g.name)).not.toContain('one too many');
    // another family is not affected
    await mustCreate(newUser('elsewhere'), { name: 'fine' });
    // a deleted group frees a place
    expectStatus(await deleteGroup(alice, groups[0]!.id), 200);
    await mustCreate(alice, { name: 'again' });
    const again = await createGroup(alice, { name: 'and one more', imageId: 'i' });
    expect(again.status).toBe(400);
    expect(errorCode(again)).toBe('group-limit');
  });

  it('holds the limit under 30 concurrent creates: exactly 20 exist', async () => {
    const user = newUser('burst');
    const token = await t.token(user, MANAGE);
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        t.call('POST', BASE, { token, body: { name: `Burst ${i}`, imageId: 'i', items: [] } }),
      ),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(20);
    const refused = replies.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(10);
    for (const r of refused) {
      expect(r.status).toBe(400);
      expect(errorCode(r)).toBe('group-limit');
    }
    const groups = await listGroups(user);
    expect(groups).toHaveLength(20);
    expect(new Set(groups.map((g) => g.familyId)).size).toBe(1);
  });

  it('uses the configured image URL template', async () => {
    const other = await startTestApp({ GROUP_IMAGE_URL_TEMPLATE: 'https://cdn.example.test/img/{imageId}/large.png' });
    try {
      const r = await other.call('POST', BASE, {
        token: await other.token(newUser(), MANAGE),
        body: { name: 'Tpl', imageId: 'a b/c' },
      });
      expectStatus(r, 201);
      expect(r.body.imageUrl).toBe('https://cdn.example.test/img/a%20b%2Fc/large.png');
    } finally {
      await other.close();
    }
  });
});

describe('a card deleted by its owner', () => {
  async function deleteCard(owner: string, cardId: string): Promise<void> {
    expectStatus(await t.call('DELETE', `/content/${cardId}`, { token: await t.token(owner, 'user:content:manage') }), 200);
  }

  it('leaves the groups it was in: items and cards stay one to one', async () => {
    const user = newUser('myo-owner');
    const free = await putCatalogueCard(t, 'free');
    const { cardId: mine } = await createCard(t, user, cardBody('My own card', { availability: 'free' }));
    await mustAdd(t, user, mine);
    await mustAdd(t, user, free);
    const g = await mustCreate(user, { name: 'With mine', items: [{ contentId: mine }, { contentId: free }] });
    expect(g.items.map((i) => i.contentId)).toEqual([mine, free]);

    await deleteCard(user, mine);
    const after = expectStatus(await getGroup(user, g.id), 200).body as Group;
    expect(after.items).toEqual([g.items[1]]);
    expect(after.cards.map((c) => c.cardId)).toEqual([free]);
    expect((await listGroups(user))[0]?.items.map((i) => i.contentId)).toEqual([free]);
  });

  it('cannot be put into a group once deleted (it is no longer in the library)', async () => {
    const user = newUser('myo-owner');
    const free = await putCatalogueCard(t, 'free');
    const { cardId: mine } = await createCard(t, user, cardBody('My own card', { availability: 'free' }));
    await mustAdd(t, user, mine);
    await mustAdd(t, user, free);
    await deleteCard(user, mine);
    const lib = expectStatus(await t.call('GET', '/card/family/library', { token: await t.token(user, VIEW) }), 200);
    expect(lib.body.cards.map((c: { cardId: string }) => c.cardId)).toEqual([free]);

    const g = await mustCreate(user, { name: 'After delete', items: [{ contentId: mine }, { contentId: free }] });
    expect(g.items.map((i) => i.contentId)).toEqual([free]);
    expect(g.cards.map((c) => c.cardId)).toEqual([free]);
    const u = expectStatus(await putGroup(user, g.id, { items: [{ contentId: free }, { contentId: mine }] }), 200)
      .body as Group;
    expect(u.items.map((i) => i.contentId)).toEqual([free]);
  });

  it('comes back in the group when an operator restores a catalogue card', async () => {
    const user = newUser('restorer');
    const cardId = await putCatalogueCard(t, 'club');
    await mustAdd(t, user, cardId);
    const g = await mustCreate(user, { name: 'Restore', items: [{ contentId: cardId }] });
    await putCatalogueCard(t, 'club', { cardId, extra: { deleted: true } });
    expect((expectStatus(await getGroup(user, g.id), 200).body as Group).items).toEqual([]);
    await putCatalogueCard(t, 'club', { cardId, extra: { deleted: false } });
    const back = expectStatus(await getGroup(user, g.id), 200).body as Group;
    expect(back.items).toEqual(g.items);
    expect(back.cards.map((c) => c.cardId)).toEqual([cardId]);
  });
});

describe('GET /card/family/library/groups', () => {
  it('returns a bare array of the family groups, oldest first, the same for every member', async () => {
    const clock = controlledClock();
    const alice = newUser('alice');
    const bob = newUser('bob');
    await familyOf(t, [alice, bob]);
    const card = await putCatalogueCard(t, 'free');
    await mustAdd(t, alice, card);
    const g1 = await mustCreate(alice, { name: 'First', items: [{ contentId: card }] });
    clock.tick(3);
    const g2 = await mustCreate(bob, { name: 'Second' });
    const r = expectStatus(await t.call('GET', BASE, { token: await t.token(bob, VIEW) }), 200);
    expect(Array.isArray(r.body)).toBe(true);
    expect(r.body).toEqual([g1, g2]);
    expect(r.body[0].cards.map((c: { cardId: string }) => c.cardId)).toEqual([card]);
    expect(r.body[0].cards[0].content.chapters).toHaveLength(1);
    expect(await listGroups(alice)).toEqual(r.body);
  });

  it('is an empty array for a user without groups', async () => {
    const r = expectStatus(await t.call('GET', BASE, { token: await t.token(newUser('none'), VIEW) }), 200);
    expect(r.body).toEqual([]);
  });

  it('does not show the groups of another family', async () => {
    const owner = newUser('owner');
    await mustCreate(owner, { name: 'Private' });
    expect(await listGroups(newUser('stranger'))).toEqual([]);
  });

  it('GET one returns the group as created', async () => {
    const { user, cards } = await userWithLibrary(2);
    const g = await mustCreate(user, { name: 'One', imageId: 'pic', items: [{ contentId: cards[1] }, { contentId: cards[0] }] });
    const r = expectStatus(await getGroup(user, g.id), 200);
    expect(r.body).toEqual(g);
  });

  it('GET one of a missing group: 404 not-found', async () => {
    const r = await getGroup(newUser(), 'ffffffffffffffffffffffff');
    expect(r.status).toBe(404);
    expect(errorCode(r)).toBe('not-found');
  });
});

describe('PUT /card/family/library/groups/{groupId}', () => {
  it('updates every field; lastModifiedAt changes, createdAt and id stay', async () => {
    const clock = controlledClock();
    const { user, cards } = await userWithLibrary(3);
    const g = await mustCreate(user, { name: 'Before', imageId: 'old', items: [{ contentId: cards[0] }] });
    clock.tick(5);
    const r = expectStatus(
      await putGroup(user, g.id, {
        name: 'After',
        imageId: 'new',
        items: [{ contentId: cards[2] }, { contentId: cards[0] }],
      }),
      200,
    );
    const u: Group = r.body;
    expect(u.id).toBe(g.id);
    expect(u.familyId).toBe(g.familyId);
    expect(u.createdAt).toBe(g.createdAt);
    expect(u.name).toBe('After');
    expect(u.imageId).toBe('new');
    expect(u.imageUrl).toBe(expectedImageUrl('new'));
    expect(u.lastModifiedAt).toMatch(ISO_MS);
    expect(u.lastModifiedAt > g.lastModifiedAt).toBe(true);
    expect(u.items.map((i) => i.contentId)).toEqual([cards[2], cards[0]]);
    // the item that stayed keeps its addedAt; the new one is added now
    expect(u.items[1]?.addedAt).toBe(g.items[0]?.addedAt);
    expect(u.items[0]?.addedAt).toBe(u.lastModifiedAt);
    expect(u.cards.map((c) => c.cardId)).toEqual([cards[2], cards[0]]);
    expect(u.cards[0]?.content.chapters).toHaveLength(1);
    expect(expectStatus(await getGroup(user, g.id), 200).body).toEqual(u);
  });

  it('moves lastModifiedAt forward on every update, even within one millisecond', async () => {
    const user = newUser('fast');
    const token = await t.token(user, MANAGE);
    // the clock stands still: every write happens in the same millisecond
    controlledClock();
    const g = await mustCreate(user, { name: 'Fast' });
    let previous = g.lastModifiedAt;
    for (let i = 0; i < 5; i++) {
      const r = expectStatus(await t.call('PUT', `${BASE}/${g.id}`, { token, body: { name: `Fast ${i}` } }), 200);
      expect(r.body.lastModifiedAt).toMatch(ISO_MS);
      expect(r.body.lastModifiedAt > previous, `${r.body.lastModifiedAt} after ${previous}`).toBe(true);
      expect(r.body.createdAt).toBe(g.createdAt);
      previous = r.body.lastModifiedAt;
    }
  });

  it('keeps the values of fields left out', async () => {
    const clock = controlledClock();
    const { user, cards } = await userWithLibrary(2);
    const g = await mustCreate(user, { name: 'Keep', imageId: 'keep-img', items: [{ contentId: cards[0] }] });
    clock.tick(3);
    const onlyName = expectStatus(await putGroup(user, g.id, { name: 'Renamed' }), 200).body as Group;
    expect(onlyName.name).toBe('Renamed');
    expect(onlyName.imageId).toBe('keep-img');
    expect(onlyName.imageUrl).toBe(g.imageUrl);
    expect(onlyName.items).toEqual(g.items);
    expect(onlyName.cards).toEqual(g.cards);
    expect(onlyName.lastModifiedAt > g.lastModifiedAt).toBe(true);

    clock.tick(3);
    const onlyItems = expectStatus(await putGroup(user, g.id, { items: [{ contentId: cards[1] }] }), 200).body as Group;
    expect(onlyItems.name).toBe('Renamed');
    expect(onlyItems.imageId).toBe('keep-img');
    expect(onlyItems.items.map((i) => i.contentId)).toEqual([cards[1]]);

    clock.tick(3);
    const nothing = expectStatus(await putGroup(user, g.id, {}), 200).body as Group;
    expect({ ...nothing, lastModifiedAt: '' }).toEqual({ ...onlyItems, lastModifiedAt: '' });
    expect(nothing.lastModifiedAt > onlyItems.lastModifiedAt).toBe(true);

    const emptied = expectStatus(await putGroup(user, g.id, { items: [] }), 200).body as Group;
    expect(emptied.items).toEqual([]);
    expect(emptied.cards).toEqual([]);
    expect(emptied.name).toBe('Renamed');
  });

  it('applies the create criteria: name cut, items cleaned', async () => {
    const { user, cards } = await userWithLibrary(2);
    const outside = await putCatalogueCard(t, 'free');
    const g = await mustCreate(user, { name: 'Criteria' });
    const long = 'n'.repeat(250);
    const u = expectStatus(
      await putGroup(user, g.id, {
        name: long,
        items: [{ contentId: cards[1] }, { contentId: outside }, { contentId: cards[1] }, { contentId: cards[0] }],
      }),
      200,
    ).body as Group;
    expect(u.name).toBe('n'.repeat(100));
    expect(u.items.map((i) => i.contentId)).toEqual([cards[1], cards[0]]);
    expect(u.cards.map((c) => c.cardId)).toEqual([cards[1], cards[0]]);
  });

  it.each([
    ['an empty name', { name: '' }],
    ['a blank name', { name: '  ' }],
    ['a null name', { name: null }],
    ['an empty imageId', { imageId: '' }],
    ['a numeric imageId', { imageId: 3 }],
    ['items not an array', { items: {} }],
    ['an item without contentId', { items: [{ id: 'x' }] }],
  ])('refuses %s: 400, and leaves the group unchanged', async (_what, body) => {
    const user = newUser('badput');
    const g = await mustCreate(user, { name: 'Stable', imageId: 'stable' });
    const r = await putGroup(user, g.id, body);
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
    expect(expectStatus(await getGroup(user, g.id), 200).body).toEqual(g);
  });

  it('is not limited by the group count (a full family can still update)', async () => {
    const user = newUser('full');
    const groups: Group[] = [];
    for (let i = 0; i < 20; i++) groups.push(await mustCreate(user, { name: `F${i}` }));
    const r = expectStatus(await putGroup(user, groups[5]!.id, { name: 'still fine' }), 200);
    expect(r.body.name).toBe('still fine');
  });

  it('never leaves a mix of two bodies under concurrent PUTs', async () => {
    const { user, cards } = await userWithLibrary(4);
    const g = await mustCreate(user, { name: 'Race', imageId: 'race' });
    const token = await t.token(user, MANAGE);
    const bodies = Array.from({ length: 24 }, (_, i) => ({
      name: `body-${i}`,
      imageId: `image-${i}`,
      items: [{ contentId: cards[i % 4] }, { contentId: cards[(i + 1) % 4] }],
    }));
    const replies = await Promise.all(bodies.map((body) => t.call('PUT', `${BASE}/${g.id}`, { token, body })));
    const consistent = (group: Group): void => {
      const i = Number(group.name.slice('body-'.length));
      expect(Number.isInteger(i)).toBe(true);
      expect(group.imageId).toBe(`image-${i}`);
      expect(group.items.map((it) => it.contentId)).toEqual([cards[i % 4], cards[(i + 1) % 4]]);
      expect(group.cards.map((c) => c.cardId)).toEqual([cards[i % 4], cards[(i + 1) % 4]]);
    };
    for (const r of replies) consistent(expectStatus(r, 200).body);
    const final = expectStatus(await getGroup(user, g.id), 200).body as Group;
    consistent(final);
    // the stored group is the body of one of the replies, the one that ended last
    expect(replies.map((r) => r.body.name)).toContain(final.name);
    const latest = replies.map((r) => r.body as Group).sort((a, b) => (a.lastModifiedAt < b.lastModifiedAt ? -1 : 1));
    expect(final.lastModifiedAt).toBe(latest.at(-1)?.lastModifiedAt);
  });

  it('answers 404 for a missing group', async () => {
    const user = newUser('missing');
    await mustCreate(user, { name: 'exists' });
    const r = await putGroup(user, 'ffffffffffffffffffffffff', { name: 'x' });
    expect(r.status).toBe(404);
    expect(errorCode(r)).toBe('not-found');
  });

  it('answers 404 for a user without any family yet', async () => {
    const r = await putGroup(newUser('nofamily'), 'ffffffffffffffffffffffff', { name: 'x' });
    expect(r.status).toBe(404);
    expect(errorCode(r)).toBe('not-found');
  });
});

describe("another family's group", () => {
  it('answers 404 to GET, PUT and DELETE, and stays unchanged', async () => {
    const { user: owner, cards } = await userWithLibrary(1, 'owner');
    const g = await mustCreate(owner, { name: 'Mine', imageId: 'mine', items: [{ contentId: cards[0] }] });
    const stranger = newUser('stranger');
    await mustCreate(stranger, { name: 'Theirs' }); // the stranger has a family with groups of its own

    const get = await getGroup(stranger, g.id);
    const put = await putGroup(stranger, g.id, { name: 'Hijacked', imageId: 'evil', items: [] });
    const del = await deleteGroup(stranger, g.id);
    const missing = await getGroup(stranger, 'ffffffffffffffffffffffff');
    for (const r of [get, put, del]) {
      expect(r.status).toBe(404);
      expect(errorCode(r)).toBe('not-found');
    }
    // answered exactly like a missing group (but for the id in the message)
    expect(get.body.error.message.replace(g.id, '<id>')).toBe(
      missing.body.error.message.replace('ffffffffffffffffffffffff', '<id>'),
    );
    expect(expectStatus(await getGroup(owner, g.id), 200).body).toEqual(g);
    expect((await listGroups(stranger)).map((x) => x.name)).toEqual(['Theirs']);
  });

  it('becomes visible to a user moved into the owning family', async () => {
    const owner = newUser('owner');
    const joiner = newUser('joiner');
    const familyId = await familyOf(t, [owner]);
    const g = await mustCreate(owner, { name: 'Shared later' });
    expect((await getGroup(joiner, g.id)).status).toBe(404);
    const r = await t.call('PUT', `/admin/families/${familyId}`, {
      token: await t.token('auth0|operator', 'admin'),
      body: { country: 'US', members: [{ userId: owner }, { userId: joiner }] },
    });
    expectStatus(r, 200);
    expect(expectStatus(await getGroup(joiner, g.id), 200).body).toEqual(g);
  });
});

describe('DELETE /card/family/library/groups/{groupId}', () => {
  it('hard-deletes: {"id"} then 404', async () => {
    const user = newUser('deleter');
    const keep = await mustCreate(user, { name: 'Keep' });
    const g = await mustCreate(user, { name: 'Gone' });
    const r = expectStatus(await deleteGroup(user, g.id), 200);
    expect(r.body).toEqual({ id: g.id });
    const after = await getGroup(user, g.id);
    expect(after.status).toBe(404);
    expect(errorCode(after)).toBe('not-found');
    expect((await listGroups(user)).map((x) => x.id)).toEqual([keep.id]);
    const again = await deleteGroup(user, g.id);
    expect(again.status).toBe(404);
    expect(errorCode(again)).toBe('not-found');
    const put = await putGroup(user, g.id, { name: 'back?' });
    expect(put.status).toBe(404);
  });
});

describe('group history', () => {
  it('records group-created, group-updated and group-deleted in the family history', async () => {
    const user = newUser('historian');
    const g = await mustCreate(user, { name: 'Hist' });
    expectStatus(await putGroup(user, g.id, { name: 'Hist 2' }), 200);
    expectStatus(await deleteGroup(user, g.id), 200);
    const r = expectStatus(
      await t.call('GET', '/user/family?allowStub=true&showhistory=true', { token: await t.token(user, '') }),
      200,
    );
    const events = (r.body.family.history as { type: string; groupId?: string }[]).filter((e) => e.groupId === g.id);
    expect(events.map((e) => e.type)).toEqual(['group-created', 'group-updated', 'group-deleted']);
  });
});

describe('scopes', () => {
  it('GETs need family:library:view (or manage), writes need family:library:manage', async () => {
    const user = newUser('scoped');
    const g = await mustCreate(user, { name: 'Scoped' });
    const viewOnly = await t.token(user, VIEW);
    const other = await t.token(user, 'user:content:manage admin');
    const manage = await t.token(user, MANAGE);

    for (const token of [viewOnly, manage]) {
      expectStatus(await t.call('GET', BASE, { token }), 200);
      expectStatus(await t.call('GET', `${BASE}/${g.id}`, { token }), 200);
    }
    for (const [method, url] of [
      ['GET', BASE],
      ['GET', `${BASE}/${g.id}`],
    ] as const) {
      const r = await t.call(method, url, { token: other });
      expect(r.status).toBe(403);
      expect(errorCode(r)).toBe('forbidden');
    }
    for (const token of [viewOnly, other]) {
      for (const [method, url, body] of [
        ['POST', BASE, { name: 'x', imageId: 'i' }],
        ['PUT', `${BASE}/${g.id}`, { name: 'changed' }],
        ['DELETE', `${BASE}/${g.id}`, undefined],
      ] as const) {
        const r = await t.call(method, url, { token, body });
        expect(r.status, `${method} ${url}`).toBe(403);
        expect(errorCode(r)).toBe('forbidden');
      }
    }
    for (const [method, url] of [
      ['GET', BASE],
      ['POST', BASE],
      ['GET', `${BASE}/${g.id}`],
      ['PUT', `${BASE}/${g.id}`],
      ['DELETE', `${BASE}/${g.id}`],
    ] as const) {
      const r = await t.call(method, url, { body: method === 'POST' || method === 'PUT' ? { name: 'x', imageId: 'i' } : undefined });
      expect(r.status, `${method} ${url}`).toBe(401);
      expect(errorCode(r)).toBe('unauthorized');
    }
    // none of the refused calls changed anything
    expect(await listGroups(user)).toEqual([g]);
  });
});
