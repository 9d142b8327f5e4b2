import type { FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnswerCache } from '../../src/http/answer-cache.js';
import { cardBody, startTestApp, type TestApp } from '../support/test-app.js';

/** What the cache reads of a request: who asks, on which route. */
const request = (userId: string, url: string): FastifyRequest =>
  ({ principal: { userId }, routeOptions: { url } }) as unknown as FastifyRequest;

describe('the answer cache (units)', () => {
  it('keeps an answer for its tag, route and caller only', () => {
    const cache = createAnswerCache(1024 * 1024)!;
    const body = Buffer.from('{"cards":[]}');
    cache.set(request('auth0|a', '/content/mine'), '"t1"', body);
    expect(cache.get(request('auth0|a', '/content/mine'), '"t1"')).toBe(body);
    expect(cache.get(request('auth0|a', '/content/mine'), '"t2"')).toBeUndefined();
    expect(cache.get(request('auth0|b', '/content/mine'), '"t1"')).toBeUndefined();
    expect(cache.get(request('auth0|a', '/card/mine'), '"t1"')).toBeUndefined();
  });

  it('holds no more than its bytes, dropping the least recently used', () => {
    const cache = createAnswerCache(4000)!;
    const kilobyte = (c: string): Buffer => Buffer.alloc(900, c);
    for (const tag of ['"1"', '"2"', '"3"', '"4"']) cache.set(request('u', '/r'), tag, kilobyte(tag[1]!));
    // Used again: now the most recent.
    expect(cache.get(request('u', '/r'), '"1"')).toBeDefined();
    cache.set(request('u', '/r'), '"5"', kilobyte('5'));
    expect(cache.get(request('u', '/r'), '"2"')).toBeUndefined();
    expect(cache.get(request('u', '/r'), '"1"')).toBeDefined();
    expect(cache.get(request('u', '/r'), '"5"')).toBeDefined();
  });

  it('does not keep an answer of more than a quarter of its bytes, and is off at 0', () => {
    const cache = createAnswerCache(4000)!;
    cache.set(request('u', '/r'), '"big"', Buffer.alloc(1001));
    expect(cache.get(request('u', '/r'), '"big"')).toBeUndefined();
    expect(createAnswerCache(0)).toBeUndefined();
  });
});

describe('answers kept by their tag (through HTTP)', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('the same bytes as a rendered answer, and a write is seen by the next read', async () => {
    t = await startTestApp();
    const [alice, bob] = await Promise.all([t.token('auth0|kept-alice'), t.token('auth0|kept-bob')]);
    await t.call('POST', '/content', { token: alice, body: cardBody("Alice's") });
    await t.call('POST', '/content', { token: bob, body: cardBody("Bob's") });
    const first = await t.call('GET', '/content/mine', { token: alice });
    const kept = await t.call('GET', '/content/mine', { token: alice });
    expect(kept.raw.body).toBe(first.raw.body);
    expect(kept.headers.etag).toBe(first.headers.etag);
    expect(kept.headers['content-type']).toBe(first.headers['content-type']);
    expect(kept.body.cards.map((c: { title: string }) => c.title)).toEqual(["Alice's"]);
    // Another caller on the same route gets their own answer.
    expect((await t.call('GET', '/content/mine', { token: bob })).body.cards.map((c: { title: string }) => c.title)).toEqual(["Bob's"]);

    await t.call('POST', '/content', { token: alice, body: cardBody('Another') });
    const after = await t.call('GET', '/content/mine', { token: alice });
    expect(after.headers.etag).not.toBe(first.headers.etag);
    expect(after.body.cards.map((c: { title: string }) => c.title).sort()).toEqual(["Alice's", 'Another']);
  });

  it('a card: kept under its tag, new after a change, and refused once the reader may not read it', async () => {
    t = await startTestApp();
    const [admin, alice, bob] = await Promise.all([t.token('auth0|kept-admin', 'admin'), t.token('auth0|kept-alice'), t.token('auth0|kept-bob')]);
    const own = (await t.call('POST', '/content', { token: alice, body: cardBody('First title') })).body.card.cardId as string;
    const first = await t.call('GET', `/content/${own}`, { token: alice });
    const kept = await t.call('GET', `/content/${own}`, { token: alice });
    expect(kept.raw.body).toBe(first.raw.body);
    expect(kept.headers.etag).toBe(first.headers.etag);
    await t.call('POST', '/content', { token: alice, body: { cardId: own, title: 'Second title' } });
    const changed = await t.call('GET', `/content/${own}`, { token: alice });
    expect(changed.headers.etag).not.toBe(first.headers.etag);
    expect(changed.body.card.title).toBe('Second title');
    // Not the owner's answer for another caller: bob may not read alice's card at all.
    expect((await t.call('GET', `/content/${own}`, { token: bob })).status).toBe(404);

    // In alice's family, bob reads her card (and it is kept for him); out of it again, he may
    // not, though the card, and so its tag, did not change.
    const family = (members: string[]) => ({
      country: 'GB',
      members: members.map((userId) => ({ userId, approved: true, verified: true, verifiedEmail: `${userId.slice(6)}@example.com` })),
    });
    await t.call('PUT', '/admin/families/kept-family', { token: admin, body: family(['auth0|kept-alice', 'auth0|kept-bob']) });
    const shared = await t.call('GET', `/content/${own}`, { token: bob });
    expect(shared.status).toBe(200);
    expect((await t.call('GET', `/content/${own}`, { token: bob })).raw.body).toBe(shared.raw.body);
    await t.call('PUT', '/admin/families/kept-family', { token: admin, body: family(['auth0|kept-alice']) });
    expect((await t.call('GET', `/content/${own}`, { token: bob })).status).toBe(404);
    expect((await t.call('GET', `/content/${own}`, { token: alice })).headers.etag).toBe(shared.headers.etag);

    // A free catalogue card, read by anyone, then made a club card: the next read is refused.
    await t.call('PUT', '/admin/cards/KeptC', { token: admin, body: { ...cardBody('Catalogue'), userId: 'cardshelf|catalogue', availability: 'free' } });
    const free = await t.call('GET', '/content/KeptC', { token: bob });
    expect(free.status).toBe(200);
    expect((await t.call('GET', '/content/KeptC', { token: bob })).raw.body).toBe(free.raw.body);
    await t.call('PUT', '/admin/cards/KeptC', { token: admin, body: { ...cardBody('Catalogue'), userId: 'cardshelf|catalogue', availability: 'premium' } });
    expect((await t.call('GET', '/content/KeptC', { token: bob })).status).toBe(404);
    expect((await t.call('GET', '/content/KeptC', { token: bob, headers: { 'if-none-match': String(free.headers.etag) } })).status).toBe(404);
  });

  it('answers byte for byte as with the cache off', async () => {
    const reads = async (env: Record<string, string>): Promise<string[]> => {
      const app = await startTestApp(env);
      try {
        const token = await app.token('auth0|same-bytes');
        await app.call('POST', '/content', { token, body: cardBody('One') });
        const bodies: string[] = [];
        for (const url of ['/content/mine', '/user/family?allowStub=true', '/card/family/library', '/card/family/library/groups']) {
          for (let i = 0; i < 2; i++) {
            const r = await app.call('GET', url, { token });
            expect(r.status, url).toBe(200);
            // Ids and times differ between the two apps: compare the shapes of the answers.
            bodies.push(r.raw.body.replace(/"[0-9a-f]{24}"|"[A-Za-z0-9]{5}"|"\d{4}-\d\d-\d\dT[^"]+"/g, '"x"'));
          }
        }
        return bodies;
      } finally {
        await app.close();
      }
    };
    expect(await reads({})).toEqual(await reads({ ANSWER_CACHE_MB: '0' }));
  });
});
