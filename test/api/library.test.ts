import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody, errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import {
  ISO_MS,
  MANAGE,
  VIEW,
  addToLibrary,
  adminToken,
  catalogueCard,
  controlledClock,
  createCard,
  expectStatus,
  familyIdOf,
  familyOf,
  mustAdd,
  newCardId,
  newUser,
  putCatalogueCard,
} from '../support/fixtures.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

type Entry = { cardId: string; addedAt: string; inFamilyLibrary: boolean; card: Record<string, any> };

async function library(userId: string, query = ''): Promise<Entry[]> {
  const r = expectStatus(await t.call('GET', `/card/family/library${query}`, { token: await t.token(userId, VIEW) }), 200);
  expect(Object.keys(r.body)).toEqual(['cards', 'subscriptions']);
  expect(r.body.subscriptions).toEqual([]);
  for (const entry of r.body.cards) expect(Object.keys(entry)).toEqual(['cardId', 'addedAt', 'inFamilyLibrary', 'card']);
  return r.body.cards;
}

describe('POST /card/family/library', () => {
  it('adds a free catalogue card: 201 with a new record', async () => {
    const user = newUser('adder');
    const cardId = await putCatalogueCard(t, 'free');
    const before = Date.now();
    const r = expectStatus(await addToLibrary(t, user, cardId), 201);
    const familyId = await familyIdOf(t, user);
    expect(Object.keys(r.body)).toEqual(['record']);
    const record = r.body.record;
    expect(Object.keys(record).sort()).toEqual(
      ['_id', 'cardId', 'createdAt', 'familyId', 'provenanceId', 'reason', 'updatedAt'].sort(),
    );
    expect(record).toEqual({
      _id: expect.stringMatching(/^\S+$/),
      cardId,
      createdAt: expect.stringMatching(ISO_MS),
      familyId,
      provenanceId: user,
      reason: 'USER_ADD',
      updatedAt: expect.stringMatching(ISO_MS),
    });
    expect(Date.parse(record.createdAt)).toBeGreaterThanOrEqual(before - 5);
    expect(Date.parse(record.createdAt)).toBeLessThanOrEqual(Date.now() + 5);
    expect(record.updatedAt).toBe(record.createdAt);
  });

  it('answers 200 with the same record when the card is there already', async () => {
    const clock = controlledClock();
    const user = newUser('twice');
    const cardId = await putCatalogueCard(t, 'free');
    const first = expectStatus(await addToLibrary(t, user, cardId), 201).body.record;
    clock.tick(5);
    const second = expectStatus(await addToLibrary(t, user, cardId), 200).body.record;
    expect(second).toEqual(first);
    expect((await library(user)).map((c) => c.cardId)).toEqual([cardId]);
  });

  it('answers 200 with the record of the member who added it first', async () => {
    const alice = newUser('alice');
    const bob = newUser('bob');
    const familyId = await familyOf(t, [alice, bob]);
    const cardId = await putCatalogueCard(t, 'free');
    const first = expectStatus(await addToLibrary(t, alice, cardId), 201).body.record;
    expect(first.familyId).toBe(familyId);
    const second = expectStatus(await addToLibrary(t, bob, cardId), 200).body.record;
    expect(second).toEqual(first);
    expect(second.provenanceId).toBe(alice);
  });

  it('adds a club card (premium, non-empty clubAvailability): 201', async () => {
    const user = newUser('club');
    const cardId = await putCatalogueCard(t, 'club');
    const r = expectStatus(await addToLibrary(t, user, cardId), 201);
    expect(r.body.record.cardId).toBe(cardId);
  });

  it('refuses a premium card that is not in the club: 400 card-not-eligible', async () => {
    const user = newUser('premium');
    const cardId = await putCatalogueCard(t, 'premium');
    const r = await addToLibrary(t, user, cardId);
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('card-not-eligible');
    expect(await library(user)).toEqual([]);
  });

  it('refuses a card without availability or clubAvailability: 400 card-not-eligible', async () => {
    const cardId = newCardId();
    const body = catalogueCard('bare', 'premium');
    delete body.availability;
    delete body.clubAvailability;
    expectStatus(await t.call('PUT', `/admin/cards/${cardId}`, { token: await adminToken(t), body }), 201);
    const r = await addToLibrary(t, newUser(), cardId);
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('card-not-eligible');
  });

  it('answers 404 for a card that does not exist', async () => {
    const r = await addToLibrary(t, newUser(), 'ZZZZZ');
    expect(r.status).toBe(404);
    expect(errorCode(r)).toBe('not-found');
  });

  it('answers 404 for a deleted catalogue card', async () => {
    const cardId = await putCatalogueCard(t, 'free', { extra: { deleted: true } });
    const r = await addToLibrary(t, newUser(), cardId);
    expect(r.status).toBe(404);
    expect(errorCode(r)).toBe('not-found');
  });

  it("answers 404 for another user's MYO card, even a free one", async () => {
    const owner = newUser('owner');
    const { cardId } = await createCard(t, owner, cardBody('My own card', { availability: 'free', clubAvailability: [{ store: 'us' }] }));
    const r = await addToLibrary(t, newUser('stranger'), cardId);
    expect(r.status).toBe(404);
    expect(errorCode(r)).toBe('not-found');
  });

  it("answers 200 with the record it is held by for a member's MYO card, to every member, storing nothing", async () => {
    const owner = newUser('owner');
    const member = newUser('member');
    const familyId = await familyOf(t, [owner, member]);
    const { cardId } = await createCard(t, owner);
    const created = expectStatus(
      await t.call('GET', `/content/${cardId}`, { token: await t.token(owner, 'user:content:view') }),
      200,
    ).body.card;
    const byOwner = expectStatus(await addToLibrary(t, owner, cardId), 200);
    expect(byOwner.body).toEqual({
      record: {
        _id: expect.stringMatching(/^[0-9a-f]{24}$/),
        cardId,
        createdAt: created.createdAt,
        familyId,
        provenanceId: owner,
        reason: 'USER_ADD',
        updatedAt: created.createdAt,
      },
    });
    // The same record at every call, whoever of the family asks.
    expect(expectStatus(await addToLibrary(t, member, cardId), 200).body).toEqual(byOwner.body);
    expect(expectStatus(await addToLibrary(t, owner, cardId), 200).body).toEqual(byOwner.body);
    // Nothing was added: no history event, and the card is listed as the member's own.
    const history = expectStatus(
      await t.call('GET', '/user/family?showhistory=true', { token: await t.token(owner, '') }),
      200,
    ).body.family.history;
    expect(history.filter((e: any) => e.type === 'card-added')).toEqual([]);
    expect((await library(member)).map((c) => [c.cardId, c.inFamilyLibrary])).toEqual([[cardId, false]]);
  });

  it("answers 404 for a MYO card of someone outside the family, free or not, and adds nothing", async () => {
    const owner = newUser('owner');
    const outsider = newUser('outsider');
    await familyOf(t, [owner]);
    await familyOf(t, [outsider]);
    for (const extra of [{}, { availability: 'free' }, { clubAvailability: [{ store: 'us' }] }]) {
      const { cardId } = await createCard(t, owner, cardBody('My own card', extra));
      const r = await addToLibrary(t, outsider, cardId);
      expect(r.status).toBe(404);
      expect(errorCode(r)).toBe('not-found');
    }
    expect(await library(outsider)).toEqual([]);
  });

  it('answers 200 for an own MYO card that is neither free nor in the club: it is in the library already', async () => {
    const owner = newUser('owner');
    const { cardId } = await createCard(t, owner);
    const r = expectStatus(await addToLibrary(t, owner, cardId), 200);
    expect(r.body.record.cardId).toBe(cardId);
    expect(r.body.record.familyId).toBe(await familyIdOf(t, owner));
  });

  it('answers 404 for an own MYO card once it is deleted', async () => {
    const owner = newUser('owner');
    const { cardId } = await createCard(t, owner, cardBody('My own card', { availability: 'free' }));
    expectStatus(
      await t.call('DELETE', `/content/${cardId}`, { token: await t.token(owner, 'user:content:manage') }),
      200,
    );
    const r = await addToLibrary(t, owner, cardId);
    expect(r.status).toBe(404);
    expect(errorCode(r)).toBe('not-found');
  });

  it('answers 200 for an own MYO card marked free, which the library lists once, as family content', async () => {
    const owner = newUser('owner');
    const { cardId } = await createCard(t, owner, cardBody('My own card', { availability: 'free' }));
    expectStatus(await addToLibrary(t, owner, cardId), 200);
    expect((await library(owner)).map((c) => [c.cardId, c.inFamilyLibrary])).toEqual([[cardId, false]]);
  });

  it.each([
    [{}],
    [{ cardId: 42 }],
    [{ cardId: null }],
    [{ cardId: '' }],
    [{ cardId: ['F0001'] }],
    [{ cardId: { id: 'F0001' } }],
    [{ card: 'F0001' }],
  ])('refuses body %j: 400 bad-request', async (body) => {
    const r = await t.call('POST', '/card/family/library', { token: await t.token(newUser(), MANAGE), body });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
  });

  it('refuses a body that is not JSON', async () => {
    const token = await t.token(newUser(), MANAGE);
    const r = await t.call('POST', '/card/family/library', {
      token,
      rawBody: '{"cardId": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
    const none = await t.call('POST', '/card/family/library', { token });
    expect(none.status).toBeGreaterThanOrEqual(400);
    expect(none.status).toBeLessThan(500);
  });

  it('needs family:library:manage (403 with view only, 401 without a token)', async () => {
    const user = newUser('scope');
    const cardId = await putCatalogueCard(t, 'free');
    for (const scope of [VIEW, 'user:content:manage', '']) {
      const r = await t.call('POST', '/card/family/library', { token: await t.token(user, scope), body: { cardId } });
      expect(r.status).toBe(403);
      expect(errorCode(r)).toBe('forbidden');
    }
    const anon = await t.call('POST', '/card/family/library', { body: { cardId } });
    expect(anon.status).toBe(401);
    expect(errorCode(anon)).toBe('unauthorized');
    // nothing was added
    expect(await library(user)).toEqual([]);
    // with the scope among others, the same call adds the card
    expectStatus(
      await t.call('POST', '/card/family/library', {
        token: await t.token(user, `user:content:view ${MANAGE}`),
        body: { cardId },
      }),
      201,
    );
  });

  it('under 50 concurrent adds of one card: exactly one 201, 49 x 200, one record', async () => {
    const user = newUser('racer');
    const cardId = await putCatalogueCard(t, 'free');
    const token = await t.token(user, MANAGE);
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => t.call('POST', '/card/family/library', { token, body: { cardId } })),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    const ids = new Set(replies.map((r) => r.body.record._id));
    expect(ids.size).toBe(1);
    const familyIds = new Set(replies.map((r) => r.body.record.familyId));
    expect(familyIds.size).toBe(1);
    const cards = await library(user);
    expect(cards.map((c) => c.cardId)).toEqual([cardId]);
    expect(cards[0]?.addedAt).toBe(replies[0]?.body.record.createdAt);
  });

  it('under concurrent adds by two members of one family: one record', async () => {
    const alice = newUser('alice');
    const bob = newUser('bob');
    await familyOf(t, [alice, bob]);
    const cardId = await putCatalogueCard(t, 'club');
    const [ta, tb] = [await t.token(alice, MANAGE), await t.token(bob, MANAGE)];
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t.call('POST', '/card/family/library', { token: i % 2 ? ta : tb, body: { cardId } }),
      ),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(19);
    expect(new Set(replies.map((r) => r.body.record._id)).size).toBe(1);
    expect((await library(bob)).map((c) => c.cardId)).toEqual([cardId]);
    // The adds that lost the race wrote nothing that stayed: one history entry of the add.
    const history = expectStatus(
      await t.call('GET', '/user/family?showhistory=true', { token: await t.token(alice, '') }),
      200,
    ).body.family.history;
    expect(history.filter((e: any) => e.type === 'card-added' && e.cardId === cardId)).toHaveLength(1);
  });
});

describe('GET /card/family/library', () => {
  it('is empty for a new user', async () => {
    expect(await library(newUser('empty'))).toEqual([]);
  });

  it('lists the cards in the order they were added, in list form without chapters', async () => {
    const clock = controlledClock();
    const user = newUser('lister');
    // ids in the other order than the adds: a tie on addedAt would list them by id
    const club = await putCatalogueCard(t, 'club', { title: 'Apple stories' });
    const free = await putCatalogueCard(t, 'free', { title: 'Zebra songs' });
    const r1 = expectStatus(await addToLibrary(t, user, free), 201).body.record;
    clock.tick(3);
    const r2 = expectStatus(await addToLibrary(t, user, club), 201).body.record;

    const cards = await library(user);
    expect(cards.map((c) => c.cardId)).toEqual([free, club]);
    expect(cards.map((c) => c.addedAt)).toEqual([r1.createdAt, r2.createdAt]);
    for (const entry of cards) {
      expect(entry.inFamilyLibrary).toBe(true);
      expect(entry.addedAt).toMatch(ISO_MS);
      expect(entry.card.cardId).toBe(entry.cardId);
      expect(entry.card.content).toBeTypeOf('object');
      expect(entry.card.content).not.toHaveProperty('chapters');
      expect(entry.card.content.activity).toBe('service_Player');
    }
    expect(cards[0]?.card.title).toBe('Zebra songs');
    expect(cards[0]?.card.availability).toBe('free');
    expect(cards[1]?.card.title).toBe('Apple stories');
    expect(cards[1]?.card.clubAvailability).toEqual([{ store: 'us' }]);

    // the full card, with chapters, is what the admin stored
    const full = expectStatus(await t.call('GET', `/card/${club}`, { token: await t.token(user, '') }), 200).body.card;
    expect(full.content.chapters).toHaveLength(1);
    const { chapters: _c, ...contentWithout } = full.content;
    expect(cards[1]?.card).toEqual({ ...full, content: contentWithout });
  });

  it('is the same for every member of the family', async () => {
    const alice = newUser('alice');
    const bob = newUser('bob');
    const outsider = newUser('outsider');
    await familyOf(t, [alice, bob]);
    const c1 = await putCatalogueCard(t, 'free');
    const c2 = await putCatalogueCard(t, 'club');
    await mustAdd(t, alice, c1);
    await mustAdd(t, bob, c2);
    const seenByAlice = await library(alice);
    const seenByBob = await library(bob);
    expect(seenByAlice.map((c) => c.cardId)).toEqual([c1, c2]);
    expect(seenByBob).toEqual(seenByAlice);
    expect(await library(outsider)).toEqual([]);
  });

  it("lets a family member read a premium club card of the library, and nobody else", async () => {
    const alice = newUser('alice');
    const bob = newUser('bob');
    const outsider = newUser('outsider');
    await familyOf(t, [alice, bob]);
    const club = await putCatalogueCard(t, 'club');
    // before it is in the library, nobody of the family can read it
    const early = await t.call('GET', `/card/${club}`, { token: await t.token(bob, '') });
    expect(early.status).toBe(404);
    expect(errorCode(early)).toBe('not-found');

    await mustAdd(t, alice, club);
    for (const member of [alice, bob]) {
      const r = expectStatus(await t.call('GET', `/card/${club}`, { token: await t.token(member, '') }), 200);
      expect(r.body.card.cardId).toBe(club);
      expect(r.body.card.availability).toBe('premium');
      expect(r.body.card.content.chapters).toHaveLength(1);
    }
    const other = await t.call('GET', `/card/${club}`, { token: await t.token(outsider, '') });
    expect(other.status).toBe(404);
    expect(errorCode(other)).toBe('not-found');
  });

  it('moves with the user: a user moved into a family sees that family library', async () => {
    const mover = newUser('mover');
    const stay = newUser('stay');
    const mine = await putCatalogueCard(t, 'free');
    await mustAdd(t, mover, mine); // into the mover's own (stub) family
    expect((await library(mover)).map((c) => c.cardId)).toEqual([mine]);

    const theirs = await putCatalogueCard(t, 'free');
    await familyOf(t, [stay]);
    await mustAdd(t, stay, theirs);
    // now the mover is listed in stay's family
    const r = await t.call('PUT', `/admin/families/${await familyIdOf(t, stay)}`, {
      token: await adminToken(t),
      body: { country: 'US', members: [{ userId: stay }, { userId: mover }] },
    });
    expectStatus(r, 200);
    expect((await library(mover)).map((c) => c.cardId)).toEqual([theirs]);
  });

  it('drops a card its owner deleted', async () => {
    const clock = controlledClock();
    const owner = newUser('owner');
    const { cardId } = await createCard(t, owner, cardBody('My own card', { availability: 'free' }));
    clock.tick(3);
    const other = await putCatalogueCard(t, 'free');
    await mustAdd(t, owner, cardId);
    await mustAdd(t, owner, other);
    expect((await library(owner)).map((c) => c.cardId)).toEqual([cardId, other]);
    expectStatus(
      await t.call('DELETE', `/content/${cardId}`, { token: await t.token(owner, 'user:content:manage') }),
      200,
    );
    expect((await library(owner)).map((c) => c.cardId)).toEqual([other]);
  });

  it('needs family:library:view (manage includes it; 403 otherwise; 401 without a token)', async () => {
    const user = newUser('viewer');
    expectStatus(await t.call('GET', '/card/family/library', { token: await t.token(user, MANAGE) }), 200);
    const r = await t.call('GET', '/card/family/library', { token: await t.token(user, 'user:content:manage') });
    expect(r.status).toBe(403);
    expect(errorCode(r)).toBe('forbidden');
    const anon = await t.call('GET', '/card/family/library');
    expect(anon.status).toBe(401);
    expect(errorCode(anon)).toBe('unauthorized');
  });
});
