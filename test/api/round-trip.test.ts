import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody, startTestApp, type TestApp } from '../support/test-app.js';
import { cardDocument, groupBody, viaJson, wishlistContent } from '../support/arbitraries.js';
import { MANAGE, expectStatus, familyOf, mustAdd, newUser, putCatalogueCard } from '../support/fixtures.js';

/**
 * The round-trip law (issue 10): whatever a read of a card, group, family library or wishlist
 * returns, a client may send back unchanged and get 200 with an identical document, the fields
 * the server generates aside. A property over generated documents, on every database.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const CONTENT = 'user:content:manage';
const RUNS = { numRuns: 25 };
const GROUPS = '/card/family/library/groups';

const withoutChapters = (card: Record<string, any>): Record<string, any> => {
  const { chapters: _chapters, ...content } = card.content;
  return { ...card, content };
};

describe('cards', () => {
  it('a card is stored as sent, and a card read back (full or list form) is taken back unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(cardDocument, async (doc) => {
        const user = newUser('rt-card');
        const token = await t.token(user, `${CONTENT} family:library:view`);
        const made = expectStatus(await t.call('POST', '/content', { token, body: doc }), 201).body.card;
        for (const [key, value] of Object.entries(viaJson(doc))) expect(made[key], key).toEqual(value);

        const read = expectStatus(await t.call('GET', `/content/${made.cardId}`, { token }), 200).body.card;
        expect(read).toEqual(made);
        const back = expectStatus(await t.call('POST', '/content', { token, body: read }), 200).body.card;
        expect(back).toEqual({ ...read, updatedAt: back.updatedAt });

        // The list form, from the family library, sent back: nothing changes, chapters included.
        const library = expectStatus(await t.call('GET', '/card/family/library', { token }), 200).body;
        const listed = library.cards.find((c: any) => c.cardId === made.cardId).card;
        expect(listed).toEqual(withoutChapters(back));
        const again = expectStatus(await t.call('POST', '/content', { token, body: listed }), 200).body.card;
        expect(again).toEqual({ ...back, updatedAt: again.updatedAt });
        const mine = expectStatus(await t.call('GET', '/content/mine', { token }), 200).body.cards;
        expect(mine).toEqual([withoutChapters(again)]);
      }),
      RUNS,
    );
  });
});

describe('groups', () => {
  let user: string;
  let cardIds: string[];
  beforeAll(async () => {
    user = newUser('rt-groups');
    const member = newUser('rt-member');
    const outsider = newUser('rt-outsider');
    await familyOf(t, [user, member]);
    cardIds = [];
    for (const offer of ['free', 'club', 'free'] as const) {
      const cardId = await putCatalogueCard(t, offer);
      await mustAdd(t, user, cardId);
      cardIds.push(cardId);
    }
    for (const owner of [user, member, outsider]) {
      const r = await t.call('POST', '/content', { token: await t.token(owner, CONTENT), body: cardBody('Playlist') });
      cardIds.push(expectStatus(r, 201).body.card.cardId);
    }
    // Cards the library does not hold (an outsider's, a premium one, a missing one) are dropped.
    cardIds.push(await putCatalogueCard(t, 'premium'), 'ZZZZZ');
  });

  it('a group read (alone, in the list, in the library view) is taken back unchanged by PUT', async () => {
    const token = await t.token(user, MANAGE);
    await fc.assert(
      fc.asyncProperty(groupBody(cardIds), async (body) => {
        const made = expectStatus(await t.call('POST', GROUPS, { token, body }), 201).body;
        try {
          const read = expectStatus(await t.call('GET', `${GROUPS}/${made.id}`, { token }), 200).body;
          expect(read).toEqual(made);
          const back = expectStatus(await t.call('PUT', `${GROUPS}/${made.id}`, { token, body: read }), 200).body;
          expect(back).toEqual({ ...read, lastModifiedAt: back.lastModifiedAt });

          const listed = expectStatus(await t.call('GET', GROUPS, { token }), 200).body;
          const fromList = listed.find((g: any) => g.id === made.id);
          expect(fromList).toEqual(back);
          const again = expectStatus(await t.call('PUT', `${GROUPS}/${made.id}`, { token, body: fromList }), 200).body;
          expect(again).toEqual({ ...back, lastModifiedAt: again.lastModifiedAt });

          // The library's view of it has `cards: []`; sent back, the group is the same.
          const view = expectStatus(await t.call('GET', '/card/family/library?view=groups', { token }), 200).body;
          const outline = view.groups.find((g: any) => g.id === made.id);
          expect(outline).toEqual({ ...again, cards: [] });
          const third = expectStatus(await t.call('PUT', `${GROUPS}/${made.id}`, { token, body: outline }), 200).body;
          expect(third).toEqual({ ...again, lastModifiedAt: third.lastModifiedAt });
        } finally {
          // At most 20 groups a family: each run takes its group away again.
          expectStatus(await t.call('DELETE', `${GROUPS}/${made.id}`, { token }), 200);
        }
      }),
      RUNS,
    );
  });
});

describe('wishlists', () => {
  it('a wishlist read (as stored, or signed) is taken back unchanged by PUT', async () => {
    await fc.assert(
      fc.asyncProperty(wishlistContent, async (content) => {
        const token = await t.token(newUser('rt-wish'), '');
        const made = expectStatus(await t.call('POST', '/wishlists?format=raw', { token, body: { content } }), 201).body;
        expect(made.content).toEqual(viaJson(content));
        const url = `/wishlists/${made.wishlistId}`;

        const raw = expectStatus(await t.call('GET', `${url}?format=raw`, { token }), 200).body;
        expect(raw).toEqual(made);
        const back = expectStatus(await t.call('PUT', `${url}?format=raw`, { token, body: raw }), 200).body;
        expect(back).toEqual(raw);

        // A signed read sent back keeps the URLs it carries (they are not references).
        const signed = expectStatus(await t.call('GET', url, { token }), 200).body;
        const signedBack = expectStatus(await t.call('PUT', url, { token, body: signed }), 200).body;
        expect(signedBack).toEqual(signed);
      }),
      RUNS,
    );
  });
});
