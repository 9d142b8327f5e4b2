import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import { URL_SAFE_ID, controlledClock, expectStatus, newUser } from '../support/fixtures.js';
import { holdFamilyImage } from '../support/held-media.js';

/** 300 KiB, the largest stored wishlist (DECISIONS.md, "Wishlists"). */
const LIMIT = 307_200;
const ID21 = 'x'.repeat(21);

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

type Content = Record<string, unknown>[];

async function create(userId: string, body: unknown, query = ''): Promise<Reply> {
  return t.call('POST', `/wishlists${query}`, { token: await t.token(userId, ''), body });
}
async function update(userId: string, id: string, body: unknown, query = ''): Promise<Reply> {
  return t.call('PUT', `/wishlists/${id}${query}`, { token: await t.token(userId, ''), body });
}
async function get(userId: string, id: string): Promise<Reply> {
  return t.call('GET', `/wishlists/${id}`, { token: await t.token(userId, '') });
}
async function mustCreate(userId: string, content: Content = [{ item: 'abcde' }]): Promise<Record<string, any>> {
  return expectStatus(await create(userId, { content }), 201).body;
}

/** Bytes of the stored wishlist's JSON, for `userId`, with 21-character ids. */
function storedSize(userId: string, content: Content): number {
  return Buffer.byteLength(JSON.stringify({ content, shareId: ID21, userId, wishlistId: ID21 }), 'utf8');
}

/** Content whose stored wishlist (of `userId`) is exactly `bytes` long. */
function contentOfSize(userId: string, bytes: number, char = 'a'): Content {
  const base = storedSize(userId, [{ item: 'abcde', note: '' }]);
  const charBytes = Buffer.byteLength(char, 'utf8');
  const room = bytes - base;
  if (room < 0) throw new Error(`cannot fill ${bytes} bytes`);
  // as many `char` as fit, the rest in ASCII
  const note = char.repeat(Math.floor(room / charBytes)) + 'a'.repeat(room % charBytes);
  const content = [{ item: 'abcde', note }];
  expect(storedSize(userId, content)).toBe(bytes);
  return content;
}

describe('POST /wishlists', () => {
  it('creates a wishlist: 201 {content, shareId, userId, wishlistId}', async () => {
    const user = newUser('wisher');
    const content = [{ item: 'abcde' }, { item: 'fghij' }];
    const r = expectStatus(await create(user, { content }), 201);
    expect(Object.keys(r.body).sort()).toEqual(['content', 'shareId', 'userId', 'wishlistId']);
    expect(r.body.content).toEqual(content);
    expect(r.body.userId).toBe(user);
    expect(r.body.wishlistId).toMatch(URL_SAFE_ID);
    expect(r.body.shareId).toMatch(URL_SAFE_ID);
    expect(r.body.shareId).not.toBe(r.body.wishlistId);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(expectStatus(await get(user, r.body.wishlistId), 200).body).toEqual(r.body);
  });

  it('generates different ids for every wishlist', async () => {
    const user = newUser('ids');
    const a = await mustCreate(user);
    const b = await mustCreate(user);
    const other = await mustCreate(newUser('ids2'));
    const ids = [a, b, other].flatMap((w) => [w.wishlistId, w.shareId]);
    expect(new Set(ids).size).toBe(6);
  });

  it('accepts an empty content array', async () => {
    const r = expectStatus(await create(newUser(), { content: [] }), 201);
    expect(r.body.content).toEqual([]);
  });

  it('ignores wishlistId, shareId and userId sent in the body', async () => {
    const user = newUser('sneaky');
    const victim = newUser('victim');
    const body = {
      content: [{ item: 'abcde' }],
      wishlistId: 'my-own-id-0123456789a',
      shareId: 'my-share-id-123456789',
      userId: victim,
    };
    const r = expectStatus(await create(user, body), 201);
    expect(r.body.userId).toBe(user);
    expect(r.body.wishlistId).not.toBe(body.wishlistId);
    expect(r.body.shareId).not.toBe(body.shareId);
    expect(r.body.wishlistId).toMatch(URL_SAFE_ID);
    expect(r.body.shareId).toMatch(URL_SAFE_ID);
    // it belongs to the caller, not to the user named in the body
    const victims = expectStatus(await t.call('GET', '/wishlists', { token: await t.token(victim, '') }), 200);
    expect(victims.body.wishlists).toEqual([]);
    expect((await get(user, body.wishlistId)).status).toBe(404);
    // values of any type for them are ignored too
    const odd = expectStatus(await create(user, { content: [], wishlistId: 5, shareId: null, userId: { x: 1 } }), 201);
    expect(odd.body.userId).toBe(user);
    expect(odd.body.wishlistId).toMatch(URL_SAFE_ID);
  });

  it('keeps extra fields of content elements as sent', async () => {
    const user = newUser('extras');
    const content = [
      { item: 'abcde', note: 'for her birthday', priority: 2, tags: ['a', 'b'], meta: { nested: { deep: true } }, gone: null },
      { item: 'fghij', 'weird key': 'é 🎵 "quoted"' },
    ];
    const r = expectStatus(await create(user, { content }), 201);
    expect(r.body.content).toEqual(content);
    expect(expectStatus(await get(user, r.body.wishlistId), 200).body.content).toEqual(content);
  });

  it.each([
    ['an element without item', { content: [{ note: 'x' }] }],
    ['a numeric item', { content: [{ item: 5 }] }],
    ['a null item', { content: [{ item: null }] }],
    ['an object item', { content: [{ item: { id: 'abcde' } }] }],
    ['an empty item', { content: [{ item: '' }] }],
    ['an element that is a string', { content: ['abcde'] }],
    ['a valid and an invalid element', { content: [{ item: 'abcde' }, { itme: 'fghij' }] }],
    ['content not an array', { content: { item: 'abcde' } }],
    ['no content', {}],
    ['a body that is an array', [{ item: 'abcde' }]],
  ])('refuses %s: 400 bad-request, and creates nothing', async (_what, body) => {
    const user = newUser('invalid');
    const r = await create(user, body);
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
    const list = expectStatus(await t.call('GET', '/wishlists', { token: await t.token(user, '') }), 200);
    expect(list.body.wishlists).toEqual([]);
  });

  it('refuses a body that is not JSON', async () => {
    const r = await t.call('POST', '/wishlists', {
      token: await t.token(newUser(), ''),
      rawBody: '{"content": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
  });

  it('refuses the 11th wishlist: 400 wishlist-limit', async () => {
    const clock = controlledClock();
    const user = newUser('collector');
    const made: string[] = [];
    for (let i = 0; i < 10; i++) {
      made.push((await mustCreate(user, [{ item: `card${i}` }])).wishlistId);
      clock.tick(2); // distinct creation times: the list is oldest first
    }
    const r = await create(user, { content: [{ item: 'one-more' }] });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('wishlist-limit');
    const list = expectStatus(await t.call('GET', '/wishlists', { token: await t.token(user, '') }), 200);
    expect(list.body.wishlists.map((w: { wishlistId: string }) => w.wishlistId)).toEqual(made);
    // the limit is per user
    await mustCreate(newUser('someone-else'));
    // deleting one frees a place
    expectStatus(await t.call('DELETE', `/wishlists/${made[3]}`, { token: await t.token(user, '') }), 200);
    await mustCreate(user);
    const again = await create(user, { content: [] });
    expect(again.status).toBe(400);
    expect(errorCode(again)).toBe('wishlist-limit');
  });

  it('holds the limit under 50 concurrent creates: exactly 10 created', async () => {
    const user = newUser('burst');
    const token = await t.token(user, '');
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        t.call('POST', '/wishlists', { token, body: { content: [{ item: `c${i}` }] } }),
      ),
    );
    const created = replies.filter((r) => r.status === 201);
    expect(created).toHaveLength(10);
    for (const r of replies.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(400);
      expect(errorCode(r)).toBe('wishlist-limit');
    }
    const list = expectStatus(await t.call('GET', '/wishlists', { token }), 200);
    expect(list.body.wishlists).toHaveLength(10);
    expect(new Set(list.body.wishlists.map((w: { wishlistId: string }) => w.wishlistId))).toEqual(
      new Set(created.map((r) => r.body.wishlistId)),
    );
  });
});

describe('wishlist size (300 KiB of stored JSON)', () => {
  it('accepts a wishlist of exactly 307,200 bytes and refuses one byte more', async () => {
    const user = newUser('sizer');
    const exact = contentOfSize(user, LIMIT);
    const r = expectStatus(await create(user, { content: exact }), 201);
    expect(Buffer.byteLength(r.raw.body, 'utf8')).toBe(LIMIT);
    expect(r.body.content).toEqual(exact);

    const over = contentOfSize(user, LIMIT + 1);
    const refused = await create(user, { content: over });
    expect(refused.status).toBe(400);
    expect(errorCode(refused)).toBe('wishlist-size');
    const list = expectStatus(await t.call('GET', '/wishlists', { token: await t.token(user, '') }), 200);
    expect(list.body.wishlists).toHaveLength(1);
  });

  it('counts UTF-8 bytes, not characters', async () => {
    const user = newUser('utf8');
    // 'é' is 2 bytes: at the limit in bytes, far below it in characters
    const exact = contentOfSize(user, LIMIT, 'é');
    expect((exact[0]!.note as string).length).toBeLessThan(LIMIT / 2 + 10);
    expectStatus(await create(user, { content: exact }), 201);
    const over = contentOfSize(user, LIMIT + 1, 'é');
    expect(JSON.stringify({ content: over, shareId: ID21, userId: user, wishlistId: ID21 }).length).toBeLessThan(LIMIT);
    const r = await create(user, { content: over });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('wishlist-size');
  });

  it('refuses a 301 KiB wishlist on create: 400 wishlist-size', async () => {
    const user = newUser('big');
    const content = [{ item: 'abcde', note: 'z'.repeat(301 * 1024) }];
    const r = await create(user, { content });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('wishlist-size');
  });

  it('refuses a wishlist whose ignored fields push the body over, only by its stored size', async () => {
    const user = newUser('padded');
    // the body is larger than 300 KiB because of an ignored field; the stored wishlist is not
    const content = contentOfSize(user, LIMIT - 10);
    const r = expectStatus(await create(user, { content, userId: 'p'.repeat(20_000) }), 201);
    expect(r.body.userId).toBe(user);
  });

  it('refuses a body far larger (5 MB): 400 wishlist-size', async () => {
    const user = newUser('huge');
    const content = [{ item: 'abcde', note: 'h'.repeat(5 * 1024 * 1024) }];
    const r = await create(user, { content });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('wishlist-size');
    const w = await mustCreate(user);
    const u = await update(user, w.wishlistId, { content });
    expect(u.status).toBe(400);
    expect(errorCode(u)).toBe('wishlist-size');
    expect(expectStatus(await get(user, w.wishlistId), 200).body).toEqual(w);
  });

  it('applies on update: over the limit 400 wishlist-size (unchanged), at the limit 200', async () => {
    const user = newUser('growing');
    const w = await mustCreate(user);
    const over = await update(user, w.wishlistId, { content: contentOfSize(user, LIMIT + 1) });
    expect(over.status).toBe(400);
    expect(errorCode(over)).toBe('wishlist-size');
    const big = await update(user, w.wishlistId, { content: [{ item: 'abcde', note: 'q'.repeat(301 * 1024) }] });
    expect(big.status).toBe(400);
    expect(errorCode(big)).toBe('wishlist-size');
    expect(expectStatus(await get(user, w.wishlistId), 200).body).toEqual(w);

    const exact = contentOfSize(user, LIMIT);
    const ok = expectStatus(await update(user, w.wishlistId, { content: exact }), 200);
    expect(ok.body.content).toEqual(exact);
    expect(Buffer.byteLength(ok.raw.body, 'utf8')).toBe(LIMIT);
  });
});

describe('PUT /wishlists/{wishlistId}', () => {
  it('replaces the content: 200, ids and owner unchanged', async () => {
    const user = newUser('editor');
    const w = await mustCreate(user, [{ item: 'abcde' }]);
    const content = [{ item: 'fghij', note: 'new' }, { item: 'klmno' }];
    const r = expectStatus(
      await update(user, w.wishlistId, {
        content,
        wishlistId: 'changed-id-0123456789',
        shareId: 'changed-share-0123456',
        userId: 'auth0|someone-else',
      }),
      200,
    );
    expect(r.body).toEqual({ content, shareId: w.shareId, userId: user, wishlistId: w.wishlistId });
    expect(expectStatus(await get(user, w.wishlistId), 200).body).toEqual(r.body);
    expect((await get(user, 'changed-id-0123456789')).status).toBe(404);
    const shared = expectStatus(
      await t.call('GET', `/wishlists/shared/${w.shareId}`, { token: await t.token(newUser(), '') }),
      200,
    );
    // The shared view adds the owner's display name (none: no account here).
    expect(shared.body).toEqual({ ...r.body, ownerName: null });
  });

  it('refuses invalid content (400) and leaves the wishlist unchanged', async () => {
    const user = newUser('editor');
    const w = await mustCreate(user);
    for (const body of [{ content: [{ item: 3 }] }, { content: [{}] }, {}, { content: 'x' }]) {
      const r = await update(user, w.wishlistId, body);
      expect(r.status).toBe(400);
      expect(errorCode(r)).toBe('bad-request');
    }
    expect(expectStatus(await get(user, w.wishlistId), 200).body).toEqual(w);
  });

  it('answers 404 for a missing wishlist', async () => {
    const r = await update(newUser(), 'AAAAAAAAAAAAAAAAAAAAA', { content: [] });
    expect(r.status).toBe(404);
    expect(errorCode(r)).toBe('not-found');
  });

  it('never mixes two bodies under concurrent updates', async () => {
    const user = newUser('racer');
    const w = await mustCreate(user);
    const token = await t.token(user, '');
    const bodies = Array.from({ length: 20 }, (_, i) => ({
      content: [{ item: `first-${i}` }, { item: `second-${i}` }],
    }));
    const replies = await Promise.all(
      bodies.map((body) => t.call('PUT', `/wishlists/${w.wishlistId}`, { token, body })),
    );
    for (const r of replies) expectStatus(r, 200);
    const final = expectStatus(await get(user, w.wishlistId), 200).body;
    const i = Number(final.content[0].item.slice('first-'.length));
    expect(final.content).toEqual(bodies[i]?.content);
  });
});

describe("another user's wishlist", () => {
  it('answers 404 to GET, PUT and DELETE, and stays unchanged', async () => {
    const owner = newUser('owner');
    const stranger = newUser('stranger');
    const w = await mustCreate(owner, [{ item: 'abcde' }]);
    const token = await t.token(stranger, 'admin family:library:manage user:content:manage');
    const replies = [
      await t.call('GET', `/wishlists/${w.wishlistId}`, { token }),
      await t.call('PUT', `/wishlists/${w.wishlistId}`, { token, body: { content: [{ item: 'hacked' }] } }),
      await t.call('DELETE', `/wishlists/${w.wishlistId}`, { token }),
    ];
    for (const r of replies) {
      expect(r.status).toBe(404);
      expect(errorCode(r)).toBe('not-found');
    }
    expect(expectStatus(await get(owner, w.wishlistId), 200).body).toEqual(w);
    const list = expectStatus(await t.call('GET', '/wishlists', { token }), 200);
    expect(list.body.wishlists).toEqual([]);
  });
});

describe('GET /wishlists and GET /wishlists/{id}', () => {
  it("lists the caller's wishlists, oldest first, and only theirs", async () => {
    const clock = controlledClock();
    const user = newUser('lister');
    const other = newUser('other');
    const a = await mustCreate(user, [{ item: 'aaaaa' }]);
    clock.tick(2);
    await mustCreate(other, [{ item: 'zzzzz' }]);
    clock.tick(2);
    const b = await mustCreate(user, [{ item: 'bbbbb', note: 'x' }]);
    const r = expectStatus(await t.call('GET', '/wishlists', { token: await t.token(user, '') }), 200);
    expect(r.body).toEqual({ wishlists: [a, b] });
  });

  it('is an empty list for a new user', async () => {
    const r = expectStatus(await t.call('GET', '/wishlists', { token: await t.token(newUser(), '') }), 200);
    expect(r.body).toEqual({ wishlists: [] });
  });

  it('answers 404 for a missing wishlist', async () => {
    const r = await get(newUser(), 'AAAAAAAAAAAAAAAAAAAAA');
    expect(r.status).toBe(404);
    expect(errorCode(r)).toBe('not-found');
  });
});

describe('DELETE /wishlists/{id}', () => {
  it('deletes: a JSON body, then 404 on GET, PUT and a second DELETE', async () => {
    const user = newUser('deleter');
    const keep = await mustCreate(user);
    const w = await mustCreate(user);
    const token = await t.token(user, '');
    const r = expectStatus(await t.call('DELETE', `/wishlists/${w.wishlistId}`, { token }), 200);
    expect(r.body).toEqual({ status: 'ok' });
    for (const reply of [
      await get(user, w.wishlistId),
      await update(user, w.wishlistId, { content: [] }),
      await t.call('DELETE', `/wishlists/${w.wishlistId}`, { token }),
      await t.call('GET', `/wishlists/shared/${w.shareId}`, { token }),
    ]) {
      expect(reply.status).toBe(404);
      expect(errorCode(reply)).toBe('not-found');
    }
    expect(expectStatus(await t.call('GET', '/wishlists', { token }), 200).body).toEqual({ wishlists: [keep] });
  });
});

describe('GET /wishlists/shared/{shareId}', () => {
  it('is readable by any signed-in user, and by the owner', async () => {
    const owner = newUser('sharer');
    const w = await mustCreate(owner, [{ item: 'abcde', note: 'gift' }]);
    for (const reader of [newUser('friend'), owner]) {
      const r = expectStatus(
        await t.call('GET', `/wishlists/shared/${w.shareId}`, { token: await t.token(reader, '') }),
        200,
      );
      expect(r.body).toEqual({ ...w, ownerName: null });
    }
  });

  it('is not found by the wishlist id, nor by a made-up share id', async () => {
    const w = await mustCreate(newUser('sharer'));
    const token = await t.token(newUser('friend'), '');
    for (const id of [w.wishlistId, 'AAAAAAAAAAAAAAAAAAAAA']) {
      const r = await t.call('GET', `/wishlists/shared/${id}`, { token });
      expect(r.status).toBe(404);
      expect(errorCode(r)).toBe('not-found');
    }
  });

  it('is read-only: no PUT or DELETE on the shared path', async () => {
    const owner = newUser('sharer');
    const w = await mustCreate(owner);
    const token = await t.token(owner, '');
    for (const method of ['PUT', 'DELETE', 'POST']) {
      const r = await t.call(method, `/wishlists/shared/${w.shareId}`, { token, body: method === 'DELETE' ? undefined : { content: [] } });
      expect(r.status, method).toBeGreaterThanOrEqual(400);
      expect(r.status, method).toBeLessThan(500);
    }
    expect(expectStatus(await get(owner, w.wishlistId), 200).body).toEqual(w);
  });
});

describe('format=raw', () => {
  it('is accepted on create, update and reads, and returns media references as stored', async () => {
    const user = newUser('raw');
    const content = [{ item: 'abcde', icon: 'service:#abc123' }];
    const c = expectStatus(await create(user, { content }, '?format=raw'), 201);
    expect(c.body.content).toEqual(content);
    const u = expectStatus(await update(user, c.body.wishlistId, { content }, '?format=raw'), 200);
    expect(u.body.content).toEqual(content);
    const token = await t.token(user, '');
    for (const url of [`/wishlists/${c.body.wishlistId}?format=raw`, `/wishlists/shared/${c.body.shareId}?format=raw`]) {
      expect(expectStatus(await t.call('GET', url, { token }), 200).body.content).toEqual(content);
    }
    expect(expectStatus(await t.call('GET', '/wishlists?format=raw', { token }), 200).body.wishlists).toHaveLength(1);
  });
});

describe('without format=raw', () => {
  /** A signed, expiring access URL of the default media URL template (this server's own), for `hash`. */
  const signed = (hash: string) =>
    new RegExp(`^http://localhost:8080/media/files/${hash}\\?expires=\\d+&signature=[A-Za-z0-9_-]{43}$`);

  /** Content naming two images `user`'s family holds, and a hash nobody holds. */
  async function contentOf(user: string): Promise<{ a: string; b: string; content: Content }> {
    const a = await holdFamilyImage(t, user);
    const b = await holdFamilyImage(t, user);
    const content = [
      { item: 'abcde', icon: `service:#${a}`, more: { list: [`service:#${b}`, 'plain', 'service:#abc123'] }, note: `see service:#${a}` },
    ];
    return { a, b, content };
  }

  function expectSigned(got: Record<string, any>[], a: string, b: string): void {
    expect(got).toHaveLength(1);
    const [element] = got as [Record<string, any>];
    expect(element.item).toBe('abcde');
    expect(element.icon).toMatch(signed(a));
    expect(element.more.list[0]).toMatch(signed(b));
    expect(element.more.list[1]).toBe('plain');
    // Media the reader may not read (here: nobody holds it) stays a reference, as stored.
    expect(element.more.list[2]).toBe('service:#abc123');
    // Only a string that is a media reference, whole, is one.
    expect(element.note).toBe(`see service:#${a}`);
    const expires = Number(new URL(element.icon).searchParams.get('expires'));
    expect(expires * 1000).toBeGreaterThan(Date.now());
    expect(expires * 1000).toBeLessThanOrEqual(Date.now() + 3_600_000 + 5_000);
  }

  it('answers media references as signed, expiring access URLs, on every route; they are stored as sent', async () => {
    const user = newUser('signed');
    const token = await t.token(user, '');
    const { a, b, content } = await contentOf(user);
    const c = expectStatus(await create(user, { content }), 201);
    expectSigned(c.body.content, a, b);
    expectSigned(expectStatus(await update(user, c.body.wishlistId, { content }), 200).body.content, a, b);
    expectSigned(expectStatus(await get(user, c.body.wishlistId), 200).body.content, a, b);
    expectSigned(expectStatus(await t.call('GET', `/wishlists/shared/${c.body.shareId}`, { token }), 200).body.content, a, b);
    const [listed] = expectStatus(await t.call('GET', '/wishlists', { token }), 200).body.wishlists;
    expectSigned(listed.content, a, b);
    // The other formats are not `raw`: they sign too.
    expectSigned(expectStatus(await t.call('GET', `/wishlists/${c.body.wishlistId}?format=signed`, { token }), 200).body.content, a, b);
    const raw = expectStatus(await t.call('GET', `/wishlists/${c.body.wishlistId}?format=raw`, { token }), 200);
    expect(raw.body.content).toEqual(content);
  });

  it('leaves content without media references exactly as sent', async () => {
    const user = newUser('unsigned');
    const plain = [{ item: 'abcde', note: 'é "q" 🎵', n: 1, nested: { a: [null, true, 'x'] } }];
    const c = expectStatus(await create(user, { content: plain }), 201);
    expect(c.body.content).toEqual(plain);
    expect(expectStatus(await get(user, c.body.wishlistId), 200).body).toEqual(c.body);
  });

  it('measures the size rule on the stored form, not on the longer signed answer', async () => {
    const user = newUser('signed-size');
    const held = await holdFamilyImage(t, user);
    const refs = Array.from({ length: 2500 }, () => ({ item: 'abcde', icon: `service:#${held}` }));
    const stored = storedSize(user, refs);
    expect(stored).toBeLessThan(LIMIT);
    const c = expectStatus(await create(user, { content: refs }), 201);
    expect(c.body.content[2499].icon).toMatch(signed(held));
    expect(Buffer.byteLength(c.raw.body, 'utf8')).toBeGreaterThan(LIMIT);
  });
});

describe('authentication', () => {
  it('needs a valid token on every wishlist route (401), but no scope', async () => {
    const owner = newUser('authed');
    const w = await mustCreate(owner); // created with a token without any scope
    for (const [method, url, body] of [
      ['POST', '/wishlists', { content: [] }],
      ['PUT', `/wishlists/${w.wishlistId}`, { content: [] }],
      ['GET', '/wishlists', undefined],
      ['GET', `/wishlists/${w.wishlistId}`, undefined],
      ['DELETE', `/wishlists/${w.wishlistId}`, undefined],
      ['GET', `/wishlists/shared/${w.shareId}`, undefined],
    ] as const) {
      const anon = await t.call(method, url, { body });
      expect(anon.status, `${method} ${url}`).toBe(401);
      expect(errorCode(anon)).toBe('unauthorized');
      expect(anon.headers['www-authenticate']).toMatch(/^Bearer/);
      const bad = await t.call(method, url, { body, token: 'abc.def.ghi' });
      expect(bad.status, `${method} ${url}`).toBe(401);
      expect(errorCode(bad)).toBe('unauthorized');
    }
    expect(expectStatus(await get(owner, w.wishlistId), 200).body).toEqual(w);
  });

  it('refuses an oversized body from a caller without a token with 401, not by its size', async () => {
    const r = await t.call('POST', '/wishlists', { body: { content: [{ item: 'a', note: 'n'.repeat(2_000_000) }] } });
    expect(r.status).toBe(401);
    expect(errorCode(r)).toBe('unauthorized');
  });
});
