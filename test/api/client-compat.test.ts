import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody, errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import { holdFamilyImage } from '../support/held-media.js';
import {
  MANAGE,
  VIEW,
  addToLibrary,
  adminToken,
  controlledClock,
  expectStatus,
  familyIdOf,
  familyOf,
  mustAdd,
  newUser,
  putCatalogueCard,
  putFamily,
} from '../support/fixtures.js';

/**
 * Issue 10, "What real clients send and expect": each row of its table, through HTTP, answered
 * as the public service answers it; and the refusals that had a good reason, still refused.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const CONTENT = 'user:content:manage';
const GROUPS = '/card/family/library/groups';

async function post(userId: string, body: unknown): Promise<Reply> {
  return t.call('POST', '/content', { token: await t.token(userId, CONTENT), body });
}
async function read(userId: string, cardId: string, path = '/content'): Promise<Reply> {
  return t.call('GET', `${path}/${cardId}`, { token: await t.token(userId, CONTENT) });
}
async function created(userId: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  return expectStatus(await post(userId, body), 201).body.card;
}
async function library(userId: string, query = ''): Promise<Record<string, any>> {
  return expectStatus(await t.call('GET', `/card/family/library${query}`, { token: await t.token(userId, VIEW) }), 200)
    .body;
}
async function createGroup(userId: string, items: string[]): Promise<Record<string, any>> {
  const body = { name: 'Ours', imageId: 'fp-cards', items: items.map((contentId) => ({ contentId })) };
  return expectStatus(await t.call('POST', GROUPS, { token: await t.token(userId, MANAGE), body }), 201).body;
}
async function getGroup(userId: string, groupId: string): Promise<Reply> {
  return t.call('GET', `${GROUPS}/${groupId}`, { token: await t.token(userId, VIEW) });
}
function expectBadRequest(r: Reply): void {
  expect(r.status, r.raw.body.slice(0, 300)).toBe(400);
  expect(errorCode(r)).toBe('bad-request');
}

/** A card whose one chapter and track carry `chapter` and `track` fields over valid defaults. */
function cardWith(chapter: Record<string, unknown>, track: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title: 'Client card',
    content: {
      chapters: [
        {
          key: '01',
          title: 'One',
          ...chapter,
          tracks: [{ key: '01', title: 'T', type: 'audio', format: 'aac', trackUrl: 'yoto:#t1', ...track }],
        },
      ],
    },
  };
}

describe('nulls the public service returns are accepted and stored as sent', () => {
  it.each([
    ['a track display null', {}, { display: null }],
    ['a track icon16x16 null', {}, { display: { icon16x16: null } }],
    ['a chapter display null', { display: null }, {}],
    ['a chapter icon16x16 null', { display: { icon16x16: null } }, {}],
    ['a chapter display empty', { display: {} }, {}],
    [
      'every nullable chapter field null',
      { ambient: null, defaultTrackAmbient: null, defaultTrackDisplay: null, overlayLabelOverride: null },
      { ambient: null },
    ],
  ])('%s', async (_label, chapter, track) => {
    const user = newUser('nulls');
    const body = cardWith(chapter, track);
    const card = await created(user, body);
    const stored = expectStatus(await read(user, card.cardId), 200).body.card;
    expect(stored.content).toEqual(body.content);
    expect(stored).toEqual(card);
  });

  it('takes the nulls of the public service\'s own group example, as a whole card', async () => {
    const user = newUser('example');
    const content = {
      activity: 'yoto_Player',
      chapters: [
        {
          ambient: null,
          defaultTrackAmbient: null,
          defaultTrackDisplay: null,
          display: {},
          duration: 0,
          fileSize: 0,
          hasStreams: true,
          key: 'ZjjerfMN6',
          overlayLabel: '1',
          overlayLabelOverride: null,
          title: 'Live',
          tracks: [
            {
              ambient: null,
              display: { icon16x16: null },
              format: 'aac',
              key: '01',
              overlayLabelOverride: null,
              title: 'Live',
              trackUrl: 'https://radio.example/live.mp3',
              type: 'stream',
            },
          ],
        },
      ],
      config: { disableAutoOverlayLabels: false },
      editSettings: { autoOverlayLabels: 'disabled', editKeys: false, podcastTrackDisplay: { icon16x16: null } },
      version: '1',
    };
    const metadata = { author: '', category: 'music', cover: {}, description: null, order: null, feedUrl: null };
    const card = await created(user, { title: 'Example', content, metadata });
    expect(card.content).toEqual(content);
    expect(card.metadata).toEqual(metadata);
  });

  const chapterOf = (body: Record<string, any>): Record<string, any> => body.content.chapters[0];
  const trackOf = (body: Record<string, any>): Record<string, any> => chapterOf(body).tracks[0];
  it.each<[string, (body: Record<string, any>) => void]>([
    ['display a string', (b) => (chapterOf(b).display = 'none')],
    ['display an array', (b) => (trackOf(b).display = [])],
    ['icon16x16 a number', (b) => (trackOf(b).display = { icon16x16: 5 })],
    ['icon16x16 a bare hash', (b) => (chapterOf(b).display = { icon16x16: 'abc' })],
    ['overlayLabelOverride a number', (b) => (chapterOf(b).overlayLabelOverride = 1)],
    ['tracks null', (b) => (chapterOf(b).tracks = null)],
    ['a track key null', (b) => (trackOf(b).key = null)],
    ['a track type null', (b) => (trackOf(b).type = null)],
    ['podcastTrackDisplay null', (b) => (b.content.editSettings = { podcastTrackDisplay: null })],
  ])('still refuses %s (400, nothing stored)', async (_label, spoil) => {
    const user = newUser('wrong');
    const body = cardWith({});
    spoil(body);
    expectBadRequest(await post(user, body));
    const mine = expectStatus(await t.call('GET', '/content/mine', { token: await t.token(user, CONTENT) }), 200);
    expect(mine.body.cards).toEqual([]);
  });
});

describe('content.version', () => {
  it.each([1, 0, 2.5, '1', ''])('accepts %j and stores it as sent', async (version) => {
    const user = newUser('version');
    const card = await created(user, { title: 'V', content: { version } });
    expect(card.content.version).toStrictEqual(version);
    expect(expectStatus(await read(user, card.cardId), 200).body.card.content.version).toStrictEqual(version);
  });

  it.each([[true], [null], [{}], [[1]]])('still refuses %j', async (version) => {
    expectBadRequest(await post(newUser('version'), { title: 'V', content: { version } }));
  });
});

describe('media references and URLs', () => {
  it('accepts yoto:#<hash> wherever service:#<hash> goes, and returns each as written', async () => {
    const user = newUser('refs');
    const body = cardWith({ display: { icon16x16: 'yoto:#icon' } }, { trackUrl: 'yoto:#track', display: { icon16x16: 'service:#i2' } });
    const card = await created(user, body);
    expect(card.content).toEqual(body.content);
    const chapter = expectStatus(await read(user, card.cardId), 200).body.card.content.chapters[0];
    expect(chapter.display.icon16x16).toBe('yoto:#icon');
    expect(chapter.tracks[0].trackUrl).toBe('yoto:#track');
    expect(chapter.tracks[0].display.icon16x16).toBe('service:#i2');
  });

  it.each(['audio', 'stream'])('accepts an https mp3 URL on a track of type %s', async (type) => {
    const user = newUser('url');
    const url = 'https://cdn.example.com/stories/one.mp3?x=1';
    const card = await created(user, cardWith({}, { type, trackUrl: url }));
    expect(card.content.chapters[0].tracks[0].trackUrl).toBe(url);
  });

  it.each(['ftp://cdn.example.com/a.mp3', 'yoto:abc', 'yoto:#', 'https://', 'https://a b', '/relative.mp3'])(
    'still refuses the trackUrl %j',
    async (trackUrl) => {
      expectBadRequest(await post(newUser('url'), cardWith({}, { trackUrl })));
    },
  );

  it('signs yoto:# and service:# references of a wishlist alike; format=raw returns them as written', async () => {
    const user = newUser('wish');
    const token = await t.token(user, '');
    const h1 = await holdFamilyImage(t, user);
    const content = [{ item: 'abcde', icon: `yoto:#${h1}`, other: `service:#${h1}`, url: 'https://x.example/a.mp3' }];
    const raw = expectStatus(await t.call('POST', '/wishlists?format=raw', { token, body: { content } }), 201).body;
    expect(raw.content).toEqual(content);
    const signed = expectStatus(await t.call('GET', `/wishlists/${raw.wishlistId}`, { token }), 200).body.content[0];
    const base = t.config.mediaUrlTemplate.replaceAll('{hash}', h1);
    expect(signed.icon.startsWith(`${base}?expires=`)).toBe(true);
    // One stored media, one URL (signed in the same second, or one second apart).
    expect(new URL(signed.icon).pathname).toBe(new URL(signed.other).pathname);
    expect(new URL(signed.icon).searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(signed.url).toBe('https://x.example/a.mp3');
    expect(signed.item).toBe('abcde');
  });
});

describe('partial updates: POST /content with a cardId', () => {
  it('keeps the chapters (and every field left out) of {cardId, title, metadata}', async () => {
    const user = newUser('partial');
    const card = await created(user, cardBody('Before', { availability: 'free', sharing: { shareCount: 2 } }));
    const r = expectStatus(
      await post(user, { cardId: card.cardId, title: 'After', metadata: { author: 'Someone' } }),
      200,
    );
    expect(r.body.card).toEqual({
      ...card,
      title: 'After',
      slug: 'after',
      sortkey: 'after',
      metadata: { author: 'Someone' },
      updatedAt: r.body.card.updatedAt,
    });
    expect(r.body.card.content.chapters).toHaveLength(1);
    expect(expectStatus(await read(user, card.cardId), 200).body.card).toEqual(r.body.card);
  });

  it('needs no title on update; a create without one is a 400', async () => {
    const user = newUser('partial');
    const card = await created(user, cardBody('Titled'));
    const r = expectStatus(await post(user, { cardId: card.cardId, availability: 'free' }), 200);
    expect(r.body.card.title).toBe('Titled');
    expect(r.body.card.availability).toBe('free');
    expect(r.body.card.content).toEqual(card.content);
    expectBadRequest(await post(user, { metadata: {} }));
  });

  it('clears a nullable field sent as null, and keeps what it leaves out', async () => {
    const user = newUser('partial');
    const card = await created(user, cardBody('Nullable', { metadata: { description: 'text', order: '3' }, note: 'x' }));
    const r = expectStatus(
      await post(user, { cardId: card.cardId, metadata: { description: null, order: '3' }, note: null }),
      200,
    );
    expect(r.body.card.metadata).toEqual({ description: null, order: '3' });
    expect(r.body.card.note).toBeNull();
    expect(r.body.card.title).toBe('Nullable');
  });

  it('keeps the chapters when the list form of the card is sent back', async () => {
    const user = newUser('partial');
    const card = await created(user, cardBody('Listed'));
    const token = await t.token(user, CONTENT);
    const [listed] = expectStatus(await t.call('GET', '/content/mine', { token }), 200).body.cards;
    expect(listed.content).not.toHaveProperty('chapters');
    const r = expectStatus(await post(user, { ...listed, title: 'Listed, edited' }), 200);
    expect(r.body.card.content).toEqual(card.content);
  });

  it('still refuses wrong types, oversized titles and other users\' cards, changing nothing', async () => {
    const user = newUser('partial');
    const card = await created(user, cardBody('Guarded'));
    for (const body of [
      { cardId: card.cardId, title: null },
      { cardId: card.cardId, title: 'x'.repeat(101) },
      { cardId: card.cardId, title: '' },
      { cardId: card.cardId, content: null },
      { cardId: card.cardId, metadata: null },
      { cardId: card.cardId, availability: 5 },
      { cardId: card.cardId, content: { chapters: [{ key: '01', tracks: [{ key: '01', type: 'audio' }] }] } },
    ]) {
      expectBadRequest(await post(user, body));
    }
    const other = await post(newUser('intruder'), { cardId: card.cardId, title: 'Mine now' });
    expect(other.status).toBe(404);
    expect(expectStatus(await read(user, card.cardId), 200).body.card).toEqual(card);
  });

  it('still refuses a body over the limit with 413', async () => {
    const user = newUser('partial');
    const card = await created(user, cardBody('Big'));
    const r = await post(user, { cardId: card.cardId, note: 'x'.repeat(t.config.bodyLimit) });
    expect(r.status).toBe(413);
    expect(errorCode(r)).toBe('payload-too-large');
    expect(expectStatus(await read(user, card.cardId), 200).body.card).toEqual(card);
  });
});

describe("the family library holds the family's own cards", () => {
  it('lists a lone user\'s MYO cards with inFamilyLibrary: false, beside the records, oldest first', async () => {
    const clock = controlledClock();
    const user = newUser('owner');
    const mine = await created(user, cardBody('Playlist'));
    clock.tick(3);
    const free = await putCatalogueCard(t, 'free');
    await mustAdd(t, user, free);
    const deleted = await created(user, cardBody('Gone'));
    expectStatus(await t.call('DELETE', `/content/${deleted.cardId}`, { token: await t.token(user, CONTENT) }), 200);

    const body = await library(user);
    expect(Object.keys(body)).toEqual(['cards', 'subscriptions']);
    expect(body.subscriptions).toEqual([]);
    expect(body.cards.map((c: any) => [c.cardId, c.inFamilyLibrary])).toEqual([
      [mine.cardId, false],
      [free, true],
    ]);
    const [own] = body.cards;
    expect(own.addedAt).toBe(mine.createdAt);
    const { chapters: _chapters, ...listContent } = mine.content;
    expect(own.card).toEqual({ ...mine, content: listContent });
  });

  it('lists every live MYO card of every member, and nothing of another family', async () => {
    const alice = newUser('alice');
    const bob = newUser('bob');
    const carol = newUser('carol');
    await familyOf(t, [alice, bob]);
    await familyOf(t, [carol]);
    const a = await created(alice, cardBody('Alice playlist'));
    const b = await created(bob, cardBody('Bob playlist'));
    const c = await created(carol, cardBody('Carol playlist'));
    for (const member of [alice, bob]) {
      const ids = (await library(member)).cards.map((e: any) => e.cardId);
      expect(ids).toEqual([a.cardId, b.cardId]);
    }
    expect((await library(carol)).cards.map((e: any) => e.cardId)).toEqual([c.cardId]);
    // Members read each other's MYO cards; an outsider gets 404, like for a missing card.
    expect(expectStatus(await read(bob, a.cardId, '/card'), 200).body.card).toEqual(a);
    expect(expectStatus(await read(alice, b.cardId), 200).body.card).toEqual(b);
    for (const path of ['/content', '/card']) {
      const r = await read(carol, a.cardId, path);
      expect(r.status).toBe(404);
      expect(errorCode(r)).toBe('not-found');
    }
  });

  it('showdeleted=true adds the records whose card was deleted, and only with the exact flag', async () => {
    const user = newUser('deleted');
    const live = await putCatalogueCard(t, 'free');
    const doomed = await putCatalogueCard(t, 'club');
    await mustAdd(t, user, live);
    await mustAdd(t, user, doomed);
    await putCatalogueCard(t, 'club', { cardId: doomed, extra: { deleted: true } });
    const myo = await created(user, cardBody('Deleted playlist'));
    expectStatus(await t.call('DELETE', `/content/${myo.cardId}`, { token: await t.token(user, CONTENT) }), 200);

    expect((await library(user)).cards.map((e: any) => e.cardId)).toEqual([live]);
    for (const off of ['?showdeleted=false', '?showdeleted=TRUE', '?showdeleted=true&showdeleted=true']) {
      expect((await library(user, off)).cards.map((e: any) => e.cardId)).toEqual([live]);
    }
    const all = (await library(user, '?showdeleted=true')).cards;
    expect(all.map((e: any) => [e.cardId, e.inFamilyLibrary, e.card.deleted])).toEqual([
      [live, true, false],
      [doomed, true, true],
    ]);
  });

  it('view=groups adds the groups, each with cards: [] and the items the library holds', async () => {
    const user = newUser('groups');
    const free = await putCatalogueCard(t, 'free');
    await mustAdd(t, user, free);
    const myo = await created(user, cardBody('In a group'));
    const group = await createGroup(user, [myo.cardId, free]);
    const body = await library(user, '?view=groups');
    expect(Object.keys(body)).toEqual(['cards', 'groups', 'subscriptions']);
    expect(body.groups).toEqual([{ ...group, cards: [] }]);
    expect(body.groups[0].items.map((i: any) => i.contentId)).toEqual([myo.cardId, free]);
    // Only `groups` turns it on.
    expect(Object.keys(await library(user, '?view=group'))).toEqual(['cards', 'subscriptions']);
    expect(Object.keys(await library(user, '?view=groups&showdeleted=true'))).toEqual(['cards', 'groups', 'subscriptions']);
  });

  it("groups take the family's MYO cards (a member's too) and render them; an outsider's card is dropped", async () => {
    const alice = newUser('alice');
    const bob = newUser('bob');
    const outsider = newUser('outsider');
    await familyOf(t, [alice, bob]);
    const own = await created(alice, cardBody('Own playlist'));
    const members = await created(bob, cardBody('Bob playlist'));
    const foreign = await created(outsider, cardBody('Not ours', { availability: 'free' }));
    const group = await createGroup(alice, [own.cardId, foreign.cardId, members.cardId]);
    expect(group.items.map((i: any) => i.contentId)).toEqual([own.cardId, members.cardId]);
    expect(group.cards).toEqual([own, members]);
    const read1 = expectStatus(await getGroup(bob, group.id), 200).body;
    expect(read1.cards).toEqual([own, members]);
  });

  it('a member who leaves takes their MYO cards out of the library and out of its groups', async () => {
    const stays = newUser('stays');
    const leaves = newUser('leaves');
    const familyId = await familyOf(t, [stays, leaves]);
    const kept = await created(stays, cardBody('Kept'));
    const taken = await created(leaves, cardBody('Taken along'));
    const group = await createGroup(stays, [taken.cardId, kept.cardId]);
    expect(group.cards.map((c: any) => c.cardId)).toEqual([taken.cardId, kept.cardId]);

    expectStatus(await putFamily(t, familyId, { members: [{ userId: stays, approved: true }] }), 200);

    expect((await library(stays)).cards.map((e: any) => e.cardId)).toEqual([kept.cardId]);
    const after = expectStatus(await getGroup(stays, group.id), 200).body;
    expect(after.items.map((i: any) => i.contentId)).toEqual([kept.cardId]);
    expect(after.cards.map((c: any) => c.cardId)).toEqual([kept.cardId]);
    const listed = expectStatus(await t.call('GET', GROUPS, { token: await t.token(stays, VIEW) }), 200).body;
    expect(listed[0].cards.map((c: any) => c.cardId)).toEqual([kept.cardId]);
    expect((await library(stays, '?view=groups')).groups[0].items.map((i: any) => i.contentId)).toEqual([kept.cardId]);
    // The family no longer reads it, nor adds it; its owner still does, in their own library.
    expect((await read(stays, taken.cardId)).status).toBe(404);
    expect((await addToLibrary(t, stays, taken.cardId)).status).toBe(404);
    expect((await library(leaves)).cards.map((e: any) => e.cardId)).toEqual([taken.cardId]);
    expect(await familyIdOf(t, leaves)).not.toBe(familyId);
  });

  it("POST of a member's MYO card answers 200 with a record; an outsider's is 404, and a group of another family is 404", async () => {
    const alice = newUser('alice');
    const bob = newUser('bob');
    const outsider = newUser('outsider');
    const familyId = await familyOf(t, [alice, bob]);
    const card = await created(bob, cardBody('Bob playlist'));
    const r = expectStatus(await addToLibrary(t, alice, card.cardId), 200);
    expect(r.body.record).toMatchObject({ cardId: card.cardId, familyId, provenanceId: bob, reason: 'USER_ADD' });
    const denied = await addToLibrary(t, outsider, card.cardId);
    expect(denied.status).toBe(404);
    expect(errorCode(denied)).toBe('not-found');
    const group = await createGroup(alice, [card.cardId]);
    const foreign = await getGroup(outsider, group.id);
    expect(foreign.status).toBe(404);
    expect(errorCode(foreign)).toBe('not-found');
    const put = await t.call('PUT', `${GROUPS}/${group.id}`, {
      token: await t.token(outsider, MANAGE),
      body: { name: 'Taken over' },
    });
    expect(put.status).toBe(404);
  });

  it("an operator's catalogue card of a family member's id is still not a MYO card of the family", async () => {
    // Catalogue cards enter a library by a record only, whoever the operator named as owner.
    const member = newUser('member');
    await familyOf(t, [member]);
    const premium = await putCatalogueCard(t, 'premium', { extra: { userId: member } });
    const r = await t.call('PUT', `/admin/cards/${premium}`, { token: await adminToken(t), body: { title: 'x', userId: member } });
    expect(r.status).toBe(200);
    expect((await library(member)).cards).toEqual([]);
    expect((await addToLibrary(t, member, premium)).status).toBe(400);
  });
});
