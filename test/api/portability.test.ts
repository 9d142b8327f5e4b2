import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody, errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { testDialect } from '../support/test-database.js';

/**
 * Where SQLite and PostgreSQL differ by nature (collation, what text may hold), the answers must
 * not. On PostgreSQL the test database has a linguistic collation (en-US, see
 * support/test-database.ts), as many servers do by default.
 */
describe(`answers that must not depend on the database (${testDialect()})`, () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp();
    token = await t.token('auth0|portable');
  });
  afterAll(() => t.close());

  it('lists cards of equal sortkey in code point order of their ids (upper case before lower)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) {
      const r = await t.call('POST', '/content', { token, body: cardBody('Same title') });
      expect(r.status).toBe(201);
      ids.push(r.body.card.cardId);
    }
    const list = await t.call('GET', '/content/mine', { token });
    // Default Array sort compares UTF-16 code units: for these ASCII ids, byte order.
    expect(list.body.cards.map((c: { cardId: string }) => c.cardId)).toEqual([...ids].sort());
  });

  it('refuses U+0000 in a stored or compared text with 400 bad-request', async () => {
    const group = await t.call('POST', '/card/family/library/groups', {
      token,
      body: { name: 'bed\u0000time', imageId: 'img', items: [] },
    });
    expect(group.status).toBe(400);
    expect(errorCode(group)).toBe('bad-request');

    const read = await t.call('GET', '/content/ab%00c', { token });
    expect(read.status).toBe(400);
    expect(errorCode(read)).toBe('bad-request');

    const groups = await t.call('GET', '/card/family/library/groups', { token });
    expect(groups.body).toEqual([]);
  });

  it.each([
    ['a card title', 'POST', '/content', { title: 'a\u0000b' }],
    ['a wishlist element', 'POST', '/wishlists', { content: [{ item: 'abcde', note: 'nul \u0000 inside' }] }],
    ['a key of a document', 'POST', '/content', { title: 'ok', metadata: { 'k\u0000': 1 } }],
  ])('refuses U+0000 in %s with 400, storing nothing (docs/api.md)', async (_what, method, url, body) => {
    const before = await t.call('GET', '/content/mine', { token });
    const r = await t.call(method, url, { token, body });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
    expect(r.body.error.message).toMatch(/U\+0000/);
    expect((await t.call('GET', '/content/mine', { token })).body).toEqual(before.body);
    expect((await t.call('GET', '/wishlists', { token })).body.wishlists ?? []).toHaveLength(0);
  });
});
