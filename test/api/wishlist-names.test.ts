import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import { expectStatus, newUser } from '../support/fixtures.js';
import { testDialect } from '../support/test-database.js';

/**
 * A wishlist's name and the shared view's owner (issue 35, row 7; docs/api.md, "Wishlists"): the
 * name is set on create, kept by a PUT that does not send it, changed or cleared by one that
 * does, at most 100 characters; the shared view names the owner by their display name.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { dialect: testDialect() });
});
afterAll(() => t.close());

async function call(method: 'POST' | 'PUT' | 'GET', userId: string, path: string, body?: unknown): Promise<Reply> {
  return t.call(method, path, { token: await t.token(userId, ''), body });
}

async function account(displayName: string): Promise<string> {
  const store = openStore(t.config.database);
  try {
    const email = `${displayName.toLowerCase().replace(/\W/g, '')}.${Math.random().toString(36).slice(2)}@example.com`;
    return (await createAccountService(store).add({ email, displayName, password: 'a long enough password' })).userId;
  } finally {
    await store.db.destroy();
  }
}

describe(`wishlist names on ${testDialect()}`, () => {
  it('a name sent on create is answered, kept by GET, the list, the shared view and a PUT of the content alone', async () => {
    const owner = newUser('namer');
    const made = expectStatus(await call('POST', owner, '/wishlists', { name: '  Birthday  ', content: [{ item: 'abcde' }] }), 201).body;
    expect(made.name).toBe('Birthday');
    expect(Object.keys(made)).toEqual(['content', 'name', 'shareId', 'userId', 'wishlistId']);
    const put = expectStatus(await call('PUT', owner, `/wishlists/${made.wishlistId}`, { content: [{ item: 'fghij' }] }), 200).body;
    expect(put).toMatchObject({ name: 'Birthday', content: [{ item: 'fghij' }] });
    expect(expectStatus(await call('GET', owner, `/wishlists/${made.wishlistId}`), 200).body.name).toBe('Birthday');
    expect(expectStatus(await call('GET', owner, '/wishlists'), 200).body.wishlists[0].name).toBe('Birthday');
    const viewer = newUser('viewer');
    expect(expectStatus(await call('GET', viewer, `/wishlists/shared/${made.shareId}`), 200).body.name).toBe('Birthday');
  });

  it.each([
    ['renamed', 'Christmas', 'Christmas'],
    ['cleared by null', null, undefined],
    ['cleared by a blank name', '   ', undefined],
  ])('a PUT with a name: %s', async (_, name, expected) => {
    const owner = newUser('renamer');
    const made = expectStatus(await call('POST', owner, '/wishlists', { name: 'Birthday', content: [] }), 201).body;
    const put = expectStatus(await call('PUT', owner, `/wishlists/${made.wishlistId}`, { name, content: [] }), 200).body;
    expect(put.name).toBe(expected);
    expect(expectStatus(await call('GET', owner, `/wishlists/${made.wishlistId}`), 200).body.name).toBe(expected);
  });

  it('an unnamed wishlist answers the interface shape, without `name`', async () => {
    const made = expectStatus(await call('POST', newUser('plain'), '/wishlists', { content: [] }), 201).body;
    expect(Object.keys(made).sort()).toEqual(['content', 'shareId', 'userId', 'wishlistId']);
  });

  it.each([
    ['POST', 101],
    ['PUT', 101],
    ['POST', 500],
  ] as const)('%s with a name of %i characters: 400 bad-request, saying the limit; nothing changes', async (method, length) => {
    const owner = newUser('long');
    const made = expectStatus(await call('POST', owner, '/wishlists', { name: 'Short', content: [] }), 201).body;
    const path = method === 'POST' ? '/wishlists' : `/wishlists/${made.wishlistId}`;
    const r = await call(method, owner, path, { name: 'é'.repeat(length), content: [] });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
    expect((r.body as { error: { message: string } }).error.message).toMatch(/at most 100 characters/);
    const lists = expectStatus(await call('GET', owner, '/wishlists'), 200).body.wishlists as { name?: string }[];
    expect(lists.map((w) => w.name)).toEqual(['Short']);
  });

  it('a name of exactly 100 characters (code points, not UTF-16 units) is accepted', async () => {
    const name = '🎁'.repeat(100);
    expect(expectStatus(await call('POST', newUser('exact'), '/wishlists', { name, content: [] }), 201).body.name).toBe(name);
  });

  it("the shared view carries the owner's display name, null without an account here", async () => {
    const owner = await account('Robin Parent');
    const viewer = await account('Second Parent');
    const made = expectStatus(await call('POST', owner, '/wishlists', { content: [{ item: 'abcde' }] }), 201).body;
    const shared = expectStatus(await call('GET', viewer, `/wishlists/shared/${made.shareId}`), 200);
    expect(shared.body.ownerName).toBe('Robin Parent');
    expect(shared.body).toMatchObject({ content: [{ item: 'abcde' }], userId: owner, shareId: made.shareId });
    // The owner's own reads do not carry it: it is the shared view's.
    expect(expectStatus(await call('GET', owner, `/wishlists/${made.wishlistId}`), 200).body).not.toHaveProperty('ownerName');

    const other = newUser('external'); // signed in by another issuer: no account, no name
    const theirs = expectStatus(await call('POST', other, '/wishlists', { content: [] }), 201).body;
    const view = expectStatus(await call('GET', viewer, `/wishlists/shared/${theirs.shareId}`), 200).body;
    expect(view).toHaveProperty('ownerName', null);
  });
});
