import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody, errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import {
  CARD_ID,
  ISO_MS,
  addToLibrary,
  type AdminMember,
  adminToken,
  catalogueCard,
  controlledClock,
  createCard,
  expectStatus,
  familyOf,
  newCardId,
  newUser,
  putCatalogueCard,
  putFamily,
} from '../support/fixtures.js';

const VIEW = 'user:content:view';
const MANAGE = 'user:content:manage';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const view = (sub: string) => t.token(sub, VIEW);
const manage = (sub: string) => t.token(sub, MANAGE);

async function listMine(sub: string, query = '', path = '/content/mine'): Promise<Record<string, any>[]> {
  const r = expectStatus(await t.call('GET', `${path}${query}`, { token: await view(sub) }), 200);
  expect(Object.keys(r.body)).toEqual(['cards']);
  expect(Array.isArray(r.body.cards)).toBe(true);
  return r.body.cards;
}

async function read(sub: string, cardId: string, path = '/content'): Promise<Reply> {
  return t.call('GET', `${path}/${encodeURIComponent(cardId)}`, { token: await view(sub) });
}

async function post(sub: string, body: unknown): Promise<Reply> {
  return t.call('POST', '/content', { token: await manage(sub), body });
}

async function remove(sub: string, cardId: string): Promise<Reply> {
  return t.call('DELETE', `/content/${encodeURIComponent(cardId)}`, { token: await manage(sub) });
}

function expectNotFound(r: Reply): void {
  expect(r.status, r.raw.body.slice(0, 300)).toBe(404);
  expect(errorCode(r)).toBe('not-found');
}

function expectBadRequest(r: Reply): void {
  expect(r.status, r.raw.body.slice(0, 300)).toBe(400);
  expect(errorCode(r)).toBe('bad-request');
}

/** A card with two chapters, one of them with two tracks. */
function richCard(title: string): Record<string, unknown> {
  return cardBody(title, {
    content: {
      activity: 'service_Player',
      version: '3',
      hidden: false,
      config: { autoadvance: 'repeat', onlineOnly: false, shuffle: [{ start: 0, end: 2, limit: 1 }] },
      chapters: [
        {
          key: '01',
          title: 'One',
          display: { icon16x16: 'service:#i1' },
          tracks: [
            { key: '01', title: 'A', type: 'audio', format: 'aac', trackUrl: 'service:#t1' },
            { key: '02', title: 'B', type: 'audio', format: 'aac', trackUrl: 'service:#t2' },
          ],
        },
        {
          key: '02',
          title: 'Two',
          tracks: [{ key: '01', title: 'C', type: 'stream', trackUrl: 'https://radio.example.com/live' }],
        },
      ],
    },
  });
}

describe('GET /content/mine and /card/mine', () => {
  it('lists nothing for a user without cards', async () => {
    const sub = newUser('empty');
    expect(await listMine(sub)).toEqual([]);
    expect(await listMine(sub, '', '/card/mine')).toEqual([]);
  });

  it('never contains content.chapters, but keeps the rest of the card', async () => {
    const sub = newUser('list');
    const created = await createCard(t, sub, richCard('Chaptered'));
    expect(created.content.chapters).toHaveLength(2);

    for (const path of ['/content/mine', '/card/mine']) {
      for (const query of ['', '?showdeleted=true']) {
        const cards = await listMine(sub, query, path);
        expect(cards).toHaveLength(1);
        const [card] = cards as [Record<string, any>];
        expect(card.content).not.toHaveProperty('chapters');
        const { chapters: _c, ...restOfContent } = created.content;
        expect(card.content).toEqual(restOfContent);
        expect(card.content.activity).toBe('service_Player');
        expect({ ...card, content: undefined }).toEqual({ ...created, content: undefined });
      }
    }
  });

  it('carries the list fields of the interface', async () => {
    const sub = newUser('fields');
    await createCard(t, sub, cardBody('Fields'));
    const [card] = (await listMine(sub)) as [Record<string, any>];
    expect(card.cardId).toMatch(CARD_ID);
    expect(card.userId).toBe(sub);
    expect(card.title).toBe('Fields');
    expect(card.slug).toBe('fields');
    expect(typeof card.sortkey).toBe('string');
    expect(card.deleted).toBe(false);
    expect(card.createdAt).toMatch(ISO_MS);
    expect(card.updatedAt).toMatch(ISO_MS);
    expect(card.metadata).toEqual({ category: 'stories', author: 'Test' });
  });

  it('gives the same answer on both paths', async () => {
    const sub = newUser('both');
    await createCard(t, sub, cardBody('One'));
    await createCard(t, sub, cardBody('Two'));
    const a = await listMine(sub);
    const b = await listMine(sub, '', '/card/mine');
    expect(a).toHaveLength(2);
    expect(b).toEqual(a);
  });

  it("lists only the caller's own MYO cards", async () => {
    const alice = newUser('alice');
    const bob = newUser('bob');
    const mine = await createCard(t, alice, cardBody('Alice card'));
    await createCard(t, bob, cardBody('Bob card'));
    // A catalogue card whose owner is alice is not one of her MYO cards.
    await putCatalogueCard(t, 'free', { title: 'Store card', extra: { userId: alice } });

    const cards = await listMine(alice);
    expect(cards.map((c) => c.cardId)).toEqual([mine.cardId]);
  });

  it('is sorted by sortkey, not by creation order', async () => {
    const sub = newUser('sorted');
    for (const title of ['Cherry', 'apple', 'Banana', 'date']) await createCard(t, sub, cardBody(title));
    const cards = await listMine(sub);
    expect(cards.map((c) => c.title)).toEqual(['apple', 'Banana', 'Cherry', 'date']);
    const keys = cards.map((c) => c.sortkey as string);
    expect(keys).toEqual([...keys].sort());
  });

  it('breaks sortkey ties by cardId', async () => {
    const sub = newUser('ties');
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push((await createCard(t, sub, cardBody('Same title'))).cardId);
    const cards = await listMine(sub);
    expect(new Set(cards.map((c) => c.sortkey)).size).toBe(1);
    expect(cards.map((c) => c.cardId)).toEqual([...ids].sort());
    expect(await listMine(sub, '', '/card/mine')).toEqual(cards);
  });

  describe('deleted cards', () => {
    let sub: string;
    let kept: Record<string, any>;
    let gone: Record<string, any>;
    beforeAll(async () => {
      sub = newUser('deleted');
      kept = await createCard(t, sub, cardBody('Kept'));
      gone = await createCard(t, sub, cardBody('Gone'));
      expectStatus(await remove(sub, gone.cardId), 200);
    });

    it('are left out by default', async () => {
      for (const path of ['/content/mine', '/card/mine']) {
        const cards = await listMine(sub, '', path);
        expect(cards.map((c) => c.cardId)).toEqual([kept.cardId]);
      }
    });

    it('are included with showdeleted=true, marked deleted', async () => {
      for (const path of ['/content/mine', '/card/mine']) {
        const cards = await listMine(sub, '?showdeleted=true', path);
        expect(cards.map((c) => [c.cardId, c.deleted])).toEqual([
          [gone.cardId, true],
          [kept.cardId, false],
        ]);
        for (const c of cards) expect(c.content).not.toHaveProperty('chapters');
      }
    });

    it.each(['TRUE', 'True', '1', 'yes', 'on', 'false', '', ' true', 'true '])(
      'are left out with showdeleted=%j',
      async (value) => {
        for (const path of ['/content/mine', '/card/mine']) {
          const cards = await listMine(sub, `?showdeleted=${encodeURIComponent(value)}`, path);
          expect(cards.map((c) => c.cardId)).toEqual([kept.cardId]);
        }
      },
    );

    it('are left out when the flag is given without a value or repeated', async () => {
      expect((await listMine(sub, '?showdeleted')).map((c) => c.cardId)).toEqual([kept.cardId]);
      expect((await listMine(sub, '?showdeleted=false&showdeleted=true')).map((c) => c.cardId)).toEqual([
        kept.cardId,
      ]);
    });
  });
});

describe('GET /content/{cardId} and /card/{cardId}', () => {
  it('gives the owner the full card with its chapters, on both paths', async () => {
    const sub = newUser('owner');
    const created = await createCard(t, sub, richCard('Full'));
    for (const path of ['/content', '/card']) {
      const r = expectStatus(await read(sub, created.cardId, path), 200);
      expect(Object.keys(r.body)).toEqual(['card']);
      expect(r.body.card).toEqual(created);
      expect(r.body.card.content.chapters).toHaveLength(2);
      expect(r.body.card.content.chapters[0].tracks[1].trackUrl).toBe('service:#t2');
    }
  });

  it('is 404 for another user, and the answer does not reveal that the card exists', async () => {
    const owner = newUser('owner');
    const other = newUser('other');
    const card = await createCard(t, owner, cardBody('Private'));
    const missing = card.cardId === 'zzzzz' ? 'yyyyy' : 'zzzzz';
    for (const path of ['/content', '/card']) {
      const hidden = await read(other, card.cardId, path);
      expectNotFound(hidden);
      const absent = await read(other, missing, path);
      expectNotFound(absent);
      expect(hidden.body.error.message.replace(card.cardId, 'ID')).toBe(
        absent.body.error.message.replace(missing, 'ID'),
      );
    }
  });

  describe('family library', () => {
    let owner: string;
    let relative: string;
    let stranger: string;
    let myo: Record<string, any>;
    let clubId: string;
    let familyId: string;
    beforeAll(async () => {
      owner = newUser('fam-owner');
      relative = newUser('fam-relative');
      stranger = newUser('stranger');
      familyId = await familyOf(t, [owner, relative]);
      // A MYO card can enter the library when it is free.
      myo = await createCard(t, owner, cardBody('Shared MYO', { availability: 'free' }));
      expect([200, 201]).toContain((await addToLibrary(t, owner, myo.cardId)).status);
      clubId = await putCatalogueCard(t, 'club', { title: 'Club card' });
      expectStatus(await addToLibrary(t, owner, clubId), 201);
    });

    it("lets a member of the family read a MYO card in the family's library", async () => {
      for (const path of ['/content', '/card']) {
        const r = expectStatus(await read(relative, myo.cardId, path), 200);
        expect(r.body.card.cardId).toBe(myo.cardId);
        expect(r.body.card.userId).toBe(owner);
        expect(r.body.card.content.chapters).toEqual(myo.content.chapters);
      }
    });

    it("lets a member read a non-free catalogue card in the family's library", async () => {
      const r = expectStatus(await read(relative, clubId, '/card'), 200);
      expect(r.body.card.cardId).toBe(clubId);
      expect(r.body.card.content.chapters).toHaveLength(1);
    });

    it("lets a member read every live MYO card of another member, added to the library or not, free or not", async () => {
      const unadded = await createCard(t, owner, cardBody('Never added', { availability: 'premium' }));
      for (const path of ['/content', '/card']) {
        const r = expectStatus(await read(relative, unadded.cardId, path), 200);
        expect(r.body.card).toEqual(unadded);
      }
      expectNotFound(await read(stranger, unadded.cardId));
    });

    it("is 404 for the family's members after they leave it", async () => {
      const leaver = newUser('leaver');
      const approved = (userId: string): AdminMember => ({ userId, approved: true });
      expectStatus(await putFamily(t, familyId, { members: [owner, relative, leaver].map(approved) }), 200);
      expectStatus(await read(leaver, myo.cardId), 200);
      expectStatus(await putFamily(t, familyId, { members: [owner, relative].map(approved) }), 200);
      // The listed members keep their family; the one left out no longer reads its library.
      expectStatus(await read(relative, myo.cardId), 200);
      expectNotFound(await read(leaver, myo.cardId));
    });

    it('is 404 for users outside the family, even for a free MYO card', async () => {
      for (const id of [myo.cardId, clubId]) {
        for (const path of ['/content', '/card']) expectNotFound(await read(stranger, id, path));
      }
    });

    it('is 404 for the family once the owner deleted the card, but the owner still reads it', async () => {
      const card = await createCard(t, owner, cardBody('Soon gone', { availability: 'free' }));
      // In the library by being the owner's: the add answers 200 with the record it is held by.
      expectStatus(await addToLibrary(t, owner, card.cardId), 200);
      expectStatus(await read(relative, card.cardId), 200);
      expectStatus(await remove(owner, card.cardId), 200);
      expectNotFound(await read(relative, card.cardId));
      expectNotFound(await read(relative, card.cardId, '/card'));
      const own = expectStatus(await read(owner, card.cardId), 200);
      expect(own.body.card.deleted).toBe(true);
      expect(own.body.card.content.chapters).toHaveLength(1);
    });
  });

  it('lets every user read a free catalogue card', async () => {
    const id = newCardId();
    const put = await t.call('PUT', `/admin/cards/${id}`, { token: await adminToken(t), body: catalogueCard('Free one', 'free') });
    const stored = expectStatus(put, 201).body.card;
    for (const path of ['/content', '/card']) {
      const r = expectStatus(await read(newUser('anyone'), id, path), 200);
      expect(r.body.card).toEqual(stored);
      expect(r.body.card.content.chapters).toHaveLength(1);
    }
  });

  it('is 404 for a premium or club catalogue card that is not in your library', async () => {
    const premium = await putCatalogueCard(t, 'premium');
    const club = await putCatalogueCard(t, 'club');
    for (const id of [premium, club]) {
      for (const path of ['/content', '/card']) expectNotFound(await read(newUser('reader'), id, path));
    }
  });

  it('is 404 for a deleted free catalogue card', async () => {
    const id = await putCatalogueCard(t, 'free', { title: 'Withdrawn', extra: { deleted: true } });
    expectNotFound(await read(newUser('reader'), id));
    expectNotFound(await read(newUser('reader'), id, '/card'));
  });

  it('lets the owner read a deleted card, and nobody else', async () => {
    const owner = newUser('owner');
    const card = await createCard(t, owner, cardBody('Deleted'));
    expectStatus(await remove(owner, card.cardId), 200);
    for (const path of ['/content', '/card']) {
      const r = expectStatus(await read(owner, card.cardId, path), 200);
      expect(r.body.card.deleted).toBe(true);
      expect(r.body.card.title).toBe('Deleted');
      expectNotFound(await read(newUser('other'), card.cardId, path));
    }
  });

  it.each(['ZZZZ9', 'abcde', '00000'])('is 404 for the unknown id %s', async (id) => {
    const sub = newUser('reader');
    expectNotFound(await read(sub, id));
    expectNotFound(await read(sub, id, '/card'));
  });

  it.each(['a', 'abcdef', 'ab-cd', 'ab_cd', 'a b', 'ÄÖÜßé', "x' OR '1'='1", '..', 'null', '%25'])(
    'is 404 for the malformed id %j',
    async (id) => {
      const sub = newUser('reader');
      expectNotFound(await read(sub, id));
      expectNotFound(await read(sub, id, '/card'));
    },
  );
});

describe('POST /content: create', () => {
  it('creates a card owned by the caller with generated fields', async () => {
    const sub = newUser('creator');
    const before = Date.now();
    const r = expectStatus(await post(sub, richCard('My First Card!')), 201);
    const after = Date.now();
    expect(Object.keys(r.body)).toEqual(['card']);
    const card = r.body.card;
    expect(card.cardId).toMatch(CARD_ID);
    expect(card.userId).toBe(sub);
    expect(card.title).toBe('My First Card!');
    expect(card.slug).toBe('my-first-card');
    expect(typeof card.sortkey).toBe('string');
    expect(card.sortkey.length).toBeGreaterThan(0);
    expect(card.deleted).toBe(false);
    expect(card.createdAt).toMatch(ISO_MS);
    expect(card.updatedAt).toBe(card.createdAt);
    const at = Date.parse(card.createdAt);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    expect(new Date(at).toISOString()).toBe(card.createdAt);
    // What the client sent is stored as sent.
    const sent = richCard('My First Card!');
    expect(card.content).toEqual(sent.content);
    expect(card.metadata).toEqual(sent.metadata);
    // And it is readable and listed.
    expect(expectStatus(await read(sub, card.cardId), 200).body.card).toEqual(card);
    expect((await listMine(sub)).map((c) => c.cardId)).toEqual([card.cardId]);
  });

  it('gives every card its own id', async () => {
    const sub = newUser('many');
    const ids = new Set<string>();
    for (let i = 0; i < 25; i++) ids.add((await createCard(t, sub, cardBody(`Card ${i}`))).cardId);
    expect(ids.size).toBe(25);
    for (const id of ids) expect(id).toMatch(CARD_ID);
  });

  it('ignores generated fields sent by the client instead of rejecting them', async () => {
    const sub = newUser('sneaky');
    const r = expectStatus(
      await post(sub, {
        ...cardBody('Sneaky'),
        cardId: null,
        userId: 'auth0|victim',
        createdAt: '2000-01-01T00:00:00.000Z',
        updatedAt: '2000-01-01T00:00:00.000Z',
        slug: 'chosen-slug',
        sortkey: '0000',
        deleted: true,
      }),
      201,
    );
    const card = r.body.card;
    expect(card.cardId).toMatch(CARD_ID);
    expect(card.userId).toBe(sub);
    expect(card.createdAt).not.toBe('2000-01-01T00:00:00.000Z');
    expect(Date.parse(card.createdAt)).toBeGreaterThan(Date.parse('2020-01-01T00:00:00.000Z'));
    expect(card.updatedAt).toBe(card.createdAt);
    expect(card.slug).toBe('sneaky');
    expect(card.sortkey).not.toBe('0000');
    expect(card.deleted).toBe(false);
    expect((await listMine(sub)).map((c) => c.cardId)).toEqual([card.cardId]);
    expect(await listMine('auth0|victim')).toEqual([]);
  });

  it('ignores generated fields of the wrong type too', async () => {
    const sub = newUser('sneaky2');
    const r = expectStatus(
      await post(sub, { ...cardBody('Typed'), createdAt: 5, updatedAt: {}, userId: 7, slug: [], sortkey: null, deleted: 'yes' }),
      201,
    );
    expect(r.body.card.userId).toBe(sub);
    expect(r.body.card.createdAt).toMatch(ISO_MS);
    expect(r.body.card.slug).toBe('typed');
    expect(r.body.card.deleted).toBe(false);
  });

  it('keeps unknown fields as sent, at every level', async () => {
    const sub = newUser('extra');
    const body = cardBody('Extras', {
      customTop: { nested: [1, 'two', null] },
      availability: 'free',
      clubAvailability: [{ store: 'uk', since: '2024' }],
      sharing: { shareCount: 1, shareLimit: 5, unknownSharing: true },
    });
    (body.metadata as Record<string, unknown>).extraMeta = 'kept';
    const content = body.content as Record<string, any>;
    content.futureField = { x: 1 };
    content.chapters[0].chapterExtra = 42;
    content.chapters[0].tracks[0].trackExtra = 'hello';
    const card = expectStatus(await post(sub, body), 201).body.card;
    expect(card.customTop).toEqual({ nested: [1, 'two', null] });
    expect(card.clubAvailability).toEqual([{ store: 'uk', since: '2024' }]);
    expect(card.sharing).toEqual({ shareCount: 1, shareLimit: 5, unknownSharing: true });
    expect(card.metadata.extraMeta).toBe('kept');
    expect(card.content.futureField).toEqual({ x: 1 });
    expect(card.content.chapters[0].chapterExtra).toBe(42);
    expect(card.content.chapters[0].tracks[0].trackExtra).toBe('hello');

    const stored = expectStatus(await read(sub, card.cardId), 200).body.card;
    expect(stored).toEqual(card);
    const [listed] = (await listMine(sub)) as [Record<string, any>];
    expect(listed.customTop).toEqual({ nested: [1, 'two', null] });
    expect(listed.content.futureField).toEqual({ x: 1 });
    expect(listed.metadata.extraMeta).toBe('kept');
  });

  it('takes a card with every field the interface shows, and gives it back as sent', async () => {
    const sub = newUser('full');
    const body = {
      title: 'Every Field',
      availability: 'premium',
      clubAvailability: [{ store: 'us' }],
      shareLinkCreatedAt: '2024-03-01T10:00:00.000Z',
      shareLinkUrl: 'https://share.example/abc',
      sharing: { linkCreatedAt: '2024-03-01T10:00:00.000Z', linkUrl: 'https://share.example/abc', shareCount: 2, shareLimit: 10 },
      content: {
        activity: 'service_Player',
        config: {
          autoadvance: 'repeat',
          onlineOnly: false,
          shuffle: [{ end: 3, limit: 2, start: 1 }],
          trackNumberOverlayTimeout: 0,
          disableAutoOverlayLabels: true,
        },
        cover: { imageL: 'https://img.example/cover.png' },
        editSettings: {
          autoOverlayLabels: 'disabled',
          editKeys: false,
          podcastTrackDisplay: { icon16x16: 'service:#podicon' },
          podcastType: 'managed',
        },
        hidden: false,
        restricted: false,
        version: '1',
        chapters: [
          {
            ambient: null,
            defaultTrackAmbient: null,
            defaultTrackDisplay: null,
            display: { icon16x16: 'service:#ch1' },
            key: '01',
            overlayLabel: '1',
            overlayLabelOverride: '',
            title: 'Intro',
            tracks: [
              {
                ambient: null,
                display: { icon16x16: 'service:#tr1' },
                format: 'aac',
                key: '01',
                title: 'Intro track',
                trackUrl: 'service:#4fKZ3nQ9',
                type: 'audio',
              },
            ],
          },
        ],
      },
      metadata: {
        author: 'Someone',
        category: 'stories',
        cover: { imageL: 'https://img.example/cover.png' },
        description: null,
        feedUrl: null,
        hidden: false,
        languages: ['en-GB', 'fr'],
        list: [],
        media: { duration: 123.5, fileSize: 4096, hasStreams: false },
        note: '',
        order: '3',
        previewAudio: 'service:#preview',
        share: true,
        status: { name: 'inprogress', updatedAt: '2024-03-01T10:00:00.000Z' },
      },
    };
    const card = expectStatus(await post(sub, body), 201).body.card;
    const { cardId, userId, createdAt, updatedAt, slug, sortkey, deleted, ...rest } = card;
    expect(rest).toEqual(body);
    expect([cardId, userId, deleted, slug]).toEqual([expect.stringMatching(CARD_ID), sub, false, 'every-field']);
    expect([createdAt, updatedAt, sortkey].every((v) => typeof v === 'string')).toBe(true);
    expect(expectStatus(await read(sub, cardId), 200).body.card).toEqual(card);
  });

  it('accepts a card with only a title, with empty content and metadata objects', async () => {
    const card = expectStatus(await post(newUser('min'), { title: 'Bare' }), 201).body.card;
    expect(card.title).toBe('Bare');
    expect(card.content).toEqual({});
    expect(card.metadata).toEqual({});
  });

  it('gives a title without letters or digits a non-empty slug', async () => {
    const card = expectStatus(await post(newUser('slug'), cardBody('!!! ???')), 201).body.card;
    expect(card.slug.length).toBeGreaterThan(0);
    expect(card.slug).toMatch(/^[a-z0-9-]+$/);
  });

  describe('validation', () => {
    it.each([
      ['an empty title', { title: '' }],
      ['a title of 101 characters', { title: 'x'.repeat(101) }],
      ['a numeric title', { title: 123 }],
      ['a null title', { title: null }],
    ])('refuses %s with 400', async (_label, patch) => {
      const sub = newUser('invalid');
      expectBadRequest(await post(sub, { ...cardBody(), ...patch }));
      expect(await listMine(sub)).toEqual([]);
    });

    it('refuses a card without a title', async () => {
      const { title: _t, ...body } = cardBody();
      expectBadRequest(await post(newUser('untitled'), body));
    });

    it('counts title characters, not UTF-16 units', async () => {
      const sub = newUser('emoji');
      const hundred = '🎵'.repeat(100);
      expect(expectStatus(await post(sub, cardBody(hundred)), 201).body.card.title).toBe(hundred);
      expectBadRequest(await post(sub, cardBody('🎵'.repeat(101))));
    });

    it('accepts a title of exactly 1 and 100 characters', async () => {
      const sub = newUser('edges');
      expect(expectStatus(await post(sub, cardBody('x')), 201).body.card.title).toBe('x');
      expect(expectStatus(await post(sub, cardBody('y'.repeat(100))), 201).body.card.title).toBe('y'.repeat(100));
    });

    it.each([
      ['the body is an array', []],
      ['the body is a string', 'a card'],
      ['the body is null', null],
      ['metadata is a string', { title: 'x', metadata: 'stories' }],
      ['content is an array', { title: 'x', content: [] }],
      ['chapters is an object', { title: 'x', content: { chapters: {} } }],
      ['a chapter has no tracks', { title: 'x', content: { chapters: [{ key: '01' }] } }],
      ['a chapter key is a number', { title: 'x', content: { chapters: [{ key: 1, tracks: [] }] } }],
      [
        'a track key is a number',
        { title: 'x', content: { chapters: [{ key: '01', tracks: [{ key: 1, type: 'audio', trackUrl: 'service:#a' }] }] } },
      ],
      [
        'a track type is unknown',
        { title: 'x', content: { chapters: [{ key: '01', tracks: [{ key: '01', type: 'video', trackUrl: 'service:#a' }] }] } },
      ],
      ['metadata.languages is a string', { title: 'x', metadata: { languages: 'en' } }],
      ['metadata.hidden is a string', { title: 'x', metadata: { hidden: 'false' } }],
      ['content.hidden is a number', { title: 'x', content: { hidden: 0 } }],
      ['metadata.media.duration is a string', { title: 'x', metadata: { media: { duration: '12' } } }],
      ['clubAvailability is an object', { title: 'x', clubAvailability: { store: 'us' } }],
      ['sharing.shareCount is a string', { title: 'x', sharing: { shareCount: '1' } }],
      ['cardId is a number', { title: 'x', cardId: 12345 }],
    ])('refuses a body where %s with 400', async (_label, body) => {
      const sub = newUser('types');
      expectBadRequest(await post(sub, body));
      expect(await listMine(sub)).toEqual([]);
    });

    it.each(['none', 'stories', 'music', 'radio', 'podcast', 'sfx', 'activities', 'alarms', ''])(
      'accepts metadata.category %j',
      async (category) => {
        const r = expectStatus(await post(newUser('cat'), { title: 'c', metadata: { category } }), 201);
        expect(r.body.card.metadata.category).toBe(category);
      },
    );

    it.each(['comedy', 'Stories', 'MUSIC', ' music', 'audiobooks'])('refuses metadata.category %j', async (category) => {
      expectBadRequest(await post(newUser('cat'), { title: 'c', metadata: { category } }));
    });

    const oneTrack = (track: Record<string, unknown>, display?: Record<string, unknown>) => ({
      title: 'Tracks',
      content: { chapters: [{ key: '01', ...(display ? { display } : {}), tracks: [{ key: '01', ...track }] }] },
    });

    it.each([
      ['a bare hash', 'abc123'],
      ['an empty string', ''],
      ['a reference without a hash', 'service:#'],
      ['a yoto reference without a hash', 'yoto:#'],
      ['a reference of another scheme', 'media:#abc'],
      ['an upper-case prefix', 'YOTO:#abc'],
      ['an ftp URL', 'ftp://cdn.example.com/a.mp3'],
      ['a number', 12345],
      ['null', null],
    ])('refuses %s as trackUrl of an audio track', async (_label, trackUrl) => {
      const sub = newUser('audio');
      expectBadRequest(await post(sub, oneTrack({ type: 'audio', trackUrl })));
      expect(await listMine(sub)).toEqual([]);
    });

    it.each(['http://cdn.example.com/a.mp3', 'https://cdn.example.com/a.mp3', 'service:#abc', 'yoto:#abc'])(
      'accepts %s as trackUrl of an audio track, stored as written',
      async (trackUrl) => {
        const r = expectStatus(await post(newUser('audio'), oneTrack({ type: 'audio', trackUrl })), 201);
        expect(r.body.card.content.chapters[0].tracks[0].trackUrl).toBe(trackUrl);
      },
    );

    it('accepts an https URL on the second track of the second chapter', async () => {
      const body = richCard('Nested URL');
      (body.content as any).chapters[1].tracks.push({ key: '02', type: 'audio', trackUrl: 'https://x.example/a.mp3' });
      const r = expectStatus(await post(newUser('audio'), body), 201);
      expect(r.body.card.content.chapters[1].tracks.at(-1).trackUrl).toBe('https://x.example/a.mp3');
    });

    it.each(['http://radio.example.com/stream', 'https://radio.example.com/live.m3u8', 'service:#abc'])(
      'accepts %s as trackUrl of a stream track',
      async (trackUrl) => {
        const r = expectStatus(await post(newUser('stream'), oneTrack({ type: 'stream', trackUrl })), 201);
        expect(r.body.card.content.chapters[0].tracks[0].trackUrl).toBe(trackUrl);
      },
    );

    it('refuses a stream track whose trackUrl is not a URL', async () => {
      expectBadRequest(await post(newUser('stream'), oneTrack({ type: 'stream', trackUrl: 'ftp://x.example/a' })));
      expectBadRequest(await post(newUser('stream'), oneTrack({ type: 'stream', trackUrl: 'radio' })));
    });

    it('takes an icon16x16 that is a media reference or an http(s) URL (DECISIONS.md), and nothing else', async () => {
      for (const icon16x16 of ['https://x.example/icon.png', 'yoto:#icon', 'service:#icon']) {
        const r = expectStatus(await post(newUser('icon'), oneTrack({ type: 'audio', trackUrl: 'service:#a' }, { icon16x16 })), 201);
        expect(r.body.card.content.chapters[0].display.icon16x16).toBe(icon16x16);
      }
      for (const icon16x16 of ['icon.png', 'ftp://x.example/icon.png', 'yoto:#']) {
        expectBadRequest(await post(newUser('icon'), oneTrack({ type: 'audio', trackUrl: 'service:#a' }, { icon16x16 })));
      }
    });
  });
});

describe('POST /content: update', () => {
  it('updates the caller’s card: 200, same id and createdAt, new updatedAt', async () => {
    const clock = controlledClock();
    const sub = newUser('updater');
    const created = await createCard(t, sub, richCard('Before'));
    clock.tick(5);
    const r = expectStatus(await post(sub, { ...cardBody('After Edit'), cardId: created.cardId }), 200);
    const card = r.body.card;
    expect(card.cardId).toBe(created.cardId);
    expect(card.userId).toBe(sub);
    expect(card.title).toBe('After Edit');
    expect(card.slug).toBe('after-edit');
    expect(card.createdAt).toBe(created.createdAt);
    expect(card.updatedAt).toMatch(ISO_MS);
    expect(Date.parse(card.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
    expect(card.deleted).toBe(false);
    // The content is replaced by what was sent.
    expect(card.content.chapters).toHaveLength(1);
    expect(expectStatus(await read(sub, created.cardId), 200).body.card).toEqual(card);
    const listed = await listMine(sub);
    expect(listed.map((c) => [c.cardId, c.title])).toEqual([[created.cardId, 'After Edit']]);
  });

  it('takes a card back as it was read (GET, edit, POST)', async () => {
    const sub = newUser('roundtrip');
    const created = await createCard(t, sub, richCard('Round trip'));
    const read1 = expectStatus(await read(sub, created.cardId), 200).body.card;
    const edited = { ...read1, metadata: { ...read1.metadata, author: 'Edited' } };
    const r = expectStatus(await post(sub, edited), 200);
    expect(r.body.card.metadata.author).toBe('Edited');
    expect(r.body.card.createdAt).toBe(created.createdAt);
    expect(r.body.card.content).toEqual(created.content);
  });

  it("ignores a userId naming someone else on update: the card stays the caller's", async () => {
    const sub = newUser('keeper');
    const created = await createCard(t, sub, cardBody('Mine'));
    const r = expectStatus(
      await post(sub, { ...cardBody('Still mine'), cardId: created.cardId, userId: 'auth0|thief', createdAt: 'x' }),
      200,
    );
    expect(r.body.card.userId).toBe(sub);
    expect(r.body.card.createdAt).toBe(created.createdAt);
    expect(await listMine('auth0|thief')).toEqual([]);
  });

  it('does not delete a card whose update says deleted: true', async () => {
    const sub = newUser('undeleter');
    const created = await createCard(t, sub, cardBody('Alive'));
    const r = expectStatus(await post(sub, { ...created, deleted: true, title: 'Still alive' }), 200);
    expect(r.body.card.deleted).toBe(false);
    expect((await listMine(sub)).map((c) => [c.cardId, c.title, c.deleted])).toEqual([
      [created.cardId, 'Still alive', false],
    ]);
  });

  it("is 404 for another user's card, which stays unchanged", async () => {
    const owner = newUser('victim');
    const attacker = newUser('attacker');
    const created = await createCard(t, owner, cardBody('Original'));
    expectNotFound(await post(attacker, { ...cardBody('Hijacked'), cardId: created.cardId }));
    expect(expectStatus(await read(owner, created.cardId), 200).body.card).toEqual(created);
    expect(await listMine(attacker)).toEqual([]);
  });

  it('is 404 for a catalogue card', async () => {
    const id = newCardId();
    const put = await t.call('PUT', `/admin/cards/${id}`, { token: await adminToken(t), body: catalogueCard('Store card', 'free') });
    const stored = expectStatus(put, 201).body.card;
    expectNotFound(await post(newUser('u'), { ...cardBody('Mine now'), cardId: id }));
    expect(expectStatus(await read(newUser('u'), id), 200).body.card).toEqual(stored);
  });

  it.each(['ZZZZ8', 'nope!', 'a'.repeat(40)])('is 404 for the unknown cardId %s, creating nothing', async (cardId) => {
    const sub = newUser('ghost');
    expectNotFound(await post(sub, { ...cardBody('Ghost'), cardId }));
    expect(await listMine(sub, '?showdeleted=true')).toEqual([]);
  });

  it('is 400 for a deleted card, which stays deleted', async () => {
    const sub = newUser('restorer');
    const created = await createCard(t, sub, cardBody('To delete'));
    expectStatus(await remove(sub, created.cardId), 200);
    expectBadRequest(await post(sub, { ...cardBody('Restored?'), cardId: created.cardId }));
    expect(await listMine(sub)).toEqual([]);
    const stored = expectStatus(await read(sub, created.cardId), 200).body.card;
    expect(stored.deleted).toBe(true);
    expect(stored.title).toBe('To delete');
  });

  it('validates an update like a create', async () => {
    const sub = newUser('validator');
    const created = await createCard(t, sub, cardBody('Valid'));
    expectBadRequest(await post(sub, { ...cardBody(''), cardId: created.cardId }));
    expectBadRequest(await post(sub, { ...cardBody('x'), cardId: created.cardId, metadata: { category: 'bogus' } }));
    expectBadRequest(
      await post(sub, {
        title: 'x',
        cardId: created.cardId,
        content: { chapters: [{ key: '01', tracks: [{ key: '01', type: 'audio', trackUrl: 'ftp://a.example/x' }] }] },
      }),
    );
    expectBadRequest(await post(sub, { cardId: created.cardId, title: null }));
    expectBadRequest(await post(sub, { cardId: created.cardId, content: null }));
    expectBadRequest(await post(sub, { cardId: created.cardId, metadata: { description: 5 } }));
    expect(expectStatus(await read(sub, created.cardId), 200).body.card).toEqual(created);
  });
});

describe('DELETE /content/{cardId}', () => {
  it('soft-deletes the caller’s card: 200 {"status":"ok"}', async () => {
    const sub = newUser('deleter');
    const created = await createCard(t, sub, cardBody('Bye'));
    const r = expectStatus(await remove(sub, created.cardId), 200);
    expect(r.body).toEqual({ status: 'ok' });
    expect(await listMine(sub)).toEqual([]);
    const [listed] = (await listMine(sub, '?showdeleted=true')) as [Record<string, any>];
    expect(listed.cardId).toBe(created.cardId);
    expect(listed.deleted).toBe(true);
    const stored = expectStatus(await read(sub, created.cardId), 200).body.card;
    expect(stored.deleted).toBe(true);
    expect(stored.createdAt).toBe(created.createdAt);
    expect(stored.content).toEqual(created.content);
    expect(Date.parse(stored.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
  });

  it('answers a second delete of the same card with 200 and leaves it deleted', async () => {
    const sub = newUser('twice');
    const created = await createCard(t, sub, cardBody('Twice'));
    expectStatus(await remove(sub, created.cardId), 200);
    const again = expectStatus(await remove(sub, created.cardId), 200);
    expect(again.body).toEqual({ status: 'ok' });
    expect((await listMine(sub, '?showdeleted=true')).map((c) => c.deleted)).toEqual([true]);
  });

  it("is 404 for another user's card, which is not deleted", async () => {
    const owner = newUser('owner');
    const created = await createCard(t, owner, cardBody('Keep me'));
    expectNotFound(await remove(newUser('intruder'), created.cardId));
    expect((await listMine(owner)).map((c) => [c.cardId, c.deleted])).toEqual([[created.cardId, false]]);
  });

  it('is 404 for a catalogue card and for unknown or malformed ids', async () => {
    const id = await putCatalogueCard(t, 'free', { title: 'Store' });
    const sub = newUser('deleter');
    expectNotFound(await remove(sub, id));
    expect(expectStatus(await read(sub, id), 200).body.card.deleted).toBe(false);
    for (const bad of ['ZZZZ7', 'x', 'mine', 'a b c']) expectNotFound(await remove(sub, bad));
  });
});

describe('PUT /admin/cards/{cardId}', () => {
  it('creates a catalogue card (201) and replaces it (200)', async () => {
    const clock = controlledClock();
    const id = newCardId();
    const token = await adminToken(t);
    const owner = newUser('store');
    const first = await t.call('PUT', `/admin/cards/${id}`, {
      token,
      body: catalogueCard('First edition', 'free', { userId: owner, cardId: 'IGNRD' }),
    });
    expectStatus(first, 201);
    const card = first.body.card;
    expect(card.cardId).toBe(id);
    expect(card.userId).toBe(owner);
    expect(card.availability).toBe('free');
    expect(card.title).toBe('First edition');
    expect(card.slug).toBe('first-edition');
    expect(card.deleted).toBe(false);
    expect(card.createdAt).toMatch(ISO_MS);
    expect(card.content.chapters).toHaveLength(1);

    clock.tick(5);
    const second = await t.call('PUT', `/admin/cards/${id}`, {
      token,
      body: { title: 'Second edition', userId: owner, availability: 'premium', clubAvailability: [{ store: 'us' }] },
    });
    expectStatus(second, 200);
    const replaced = second.body.card;
    expect(replaced.cardId).toBe(id);
    expect(replaced.title).toBe('Second edition');
    expect(replaced.availability).toBe('premium');
    expect(replaced.clubAvailability).toEqual([{ store: 'us' }]);
    // Replaced, not merged: the chapters of the first edition are gone.
    expect(replaced.content).toEqual({});
    expect(replaced.createdAt).toBe(card.createdAt);
    expect(Date.parse(replaced.updatedAt)).toBeGreaterThan(Date.parse(card.updatedAt));

    // Now premium: no longer readable by a stranger.
    expectNotFound(await read(newUser('stranger'), id));
    expect(expectStatus(await read(owner, id), 200).body.card).toEqual(replaced);
    expectNotFound(await read(newUser('stranger'), 'IGNRD'));
  });

  it.each(['abcd', 'abcdef', 'ab-cd', 'ab_cd', 'ab%20c', 'ÄÖÜßé'])('refuses the cardId %s with 400', async (id) => {
    const r = await t.call('PUT', `/admin/cards/${id}`, {
      token: await adminToken(t),
      body: catalogueCard('Bad id', 'premium'),
    });
    expectBadRequest(r);
  });

  it('refuses a card without an owner or with an invalid field', async () => {
    const token = await adminToken(t);
    const { userId: _u, ...noOwner } = catalogueCard('No owner', 'premium');
    expectBadRequest(await t.call('PUT', `/admin/cards/${newCardId()}`, { token, body: noOwner }));
    expectBadRequest(
      await t.call('PUT', `/admin/cards/${newCardId()}`, { token, body: catalogueCard('x', 'premium', { deleted: 'no' }) }),
    );
    expectBadRequest(
      await t.call('PUT', `/admin/cards/${newCardId()}`, { token, body: catalogueCard('', 'premium') }),
    );
  });

  it("does not take over a user's MYO card", async () => {
    const owner = newUser('myo-owner');
    const created = await createCard(t, owner, cardBody('Mine'));
    const r = await t.call('PUT', `/admin/cards/${created.cardId}`, {
      token: await adminToken(t),
      body: catalogueCard('Taken', 'free'),
    });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    errorCode(r);
    expect(expectStatus(await read(owner, created.cardId), 200).body.card).toEqual(created);
    expectNotFound(await read(newUser('stranger'), created.cardId));
  });
});
