import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody, errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import {
  MANAGE,
  adminToken,
  expectStatus,
  familyIdOf,
  mustAdd,
  newFamilyId,
  newUser,
  putCatalogueCard,
  putFamily,
  catalogueCard,
} from '../support/fixtures.js';

/**
 * Conditional requests (issue 12): every read carries a strong ETag and answers 304 to a
 * matching If-None-Match; PUT of a group or wishlist and the update form of POST /content refuse
 * a stale If-Match with 412 and change nothing.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ MEDIA_URL_SECRET: 'conditional-test-secret' });
});
afterAll(() => t.close());

const ALL = 'user:content:manage family:library:manage';
const STRONG_TAG = /^"[A-Za-z0-9_-]{27}(\.[A-Za-z0-9_-]{16})?(\.s\d+-[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{11})?"$/;

async function get(userId: string, url: string, headers: Record<string, string> = {}): Promise<Reply> {
  return t.call('GET', url, { token: await t.token(userId, ALL), headers });
}

/** A family of two members with a catalogue card and a MYO card in its library, a group and a wishlist. */
async function scenario() {
  const [a, b] = [newUser('parent-a'), newUser('parent-b')];
  const familyId = newFamilyId();
  expectStatus(await putFamily(t, familyId, { members: [{ userId: a, approved: true }, { userId: b, approved: true }] }), 201);
  const free = await putCatalogueCard(t, 'free');
  await mustAdd(t, a, free);
  const myo = expectStatus(await t.call('POST', '/content', { token: await t.token(b, ALL), body: cardBody('B card') }), 201).body
    .card.cardId as string;
  const group = expectStatus(
    await t.call('POST', '/card/family/library/groups', {
      token: await t.token(a, MANAGE),
      body: { name: 'Bedtime', imageId: 'moon', items: [{ contentId: free }, { contentId: myo }] },
    }),
    201,
  ).body.id as string;
  const other = expectStatus(
    await t.call('POST', '/card/family/library/groups', {
      token: await t.token(a, MANAGE),
      body: { name: 'Other', imageId: 'sun', items: [] },
    }),
    201,
  ).body.id as string;
  const wish = expectStatus(
    await t.call('POST', '/wishlists', { token: await t.token(a, ALL), body: { content: [{ item: free, icon: 'service:#abc' }] } }),
    201,
  ).body as { wishlistId: string; shareId: string };
  return { a, b, familyId, free, myo, group, other, wishlistId: wish.wishlistId, shareId: wish.shareId };
}

describe('ETag and If-None-Match on every read', () => {
  let s: Awaited<ReturnType<typeof scenario>>;
  beforeAll(async () => {
    s = await scenario();
  });

  const reads = (): [string, string, string][] => [
    ['the owner\'s cards (/content/mine)', s.b, '/content/mine'],
    ['the owner\'s cards (/card/mine)', s.b, '/card/mine'],
    ['the owner\'s cards with deleted ones', s.b, '/content/mine?showdeleted=true'],
    ['a card', s.a, `/content/${s.myo}`],
    ['a card (/card)', s.a, `/card/${s.myo}`],
    ['a card, playable (signed)', s.a, `/card/${s.myo}?playable=true`],
    ['the family', s.a, '/user/family'],
    ['the family with its history', s.a, '/user/family?showhistory=true'],
    ['the family library', s.a, '/card/family/library'],
    ['the family library with groups', s.a, '/card/family/library?view=groups'],
    ['the groups', s.a, '/card/family/library/groups'],
    ['a group', s.b, `/card/family/library/groups/${s.group}`],
    ['the wishlists (signed)', s.a, '/wishlists'],
    ['the wishlists (raw)', s.a, '/wishlists?format=raw'],
    ['a wishlist (signed)', s.a, `/wishlists/${s.wishlistId}`],
    ['a wishlist (raw)', s.a, `/wishlists/${s.wishlistId}?format=raw`],
    ['a shared wishlist', s.b, `/wishlists/shared/${s.shareId}?format=raw`],
  ];

  it.each(Array.from({ length: 17 }, (_, i) => i))('read %i: a strong ETag, and 304 with no body for it', async (i) => {
    const [what, user, url] = reads()[i]!;
    const first = expectStatus(await get(user, url), 200);
    const tag = first.headers.etag as string;
    expect(tag, what).toMatch(STRONG_TAG);
    expect(first.headers['cache-control']).toBe('private, no-cache');
    // Nothing changed: the same tag, and the same bytes.
    const again = expectStatus(await get(user, url), 200);
    expect(again.headers.etag).toBe(tag);
    expect(again.raw.body).toBe(first.raw.body);

    for (const header of [tag, `W/${tag}`, `"nope", ${tag}`, '*', ` "x" ,, W/${tag} `]) {
      const r = await get(user, url, { 'if-none-match': header });
      expect(r.status, `${what} with If-None-Match ${header}`).toBe(304);
      expect(r.raw.body).toBe('');
      expect(r.headers.etag).toBe(tag);
      expect(r.headers['content-length']).toBeUndefined();
    }
    for (const header of ['"nope"', `W/"nope"`, tag.slice(1, -1), 'garbage, "']) {
      const r = await get(user, url, { 'if-none-match': header });
      expect(r.status, `${what} with If-None-Match ${header}`).toBe(200);
      expect(r.raw.body).toBe(first.raw.body);
    }
  });

  it('two reads share a tag only when they answer the same bytes', async () => {
    const byTag = new Map<string, { what: string; body: string }>();
    for (const [what, user, url] of reads()) {
      const r = expectStatus(await get(user, url), 200);
      const seen = byTag.get(r.headers.etag as string);
      if (seen) expect(r.raw.body, `${what} has the tag of ${seen.what}`).toBe(seen.body);
      byTag.set(r.headers.etag as string, { what, body: r.raw.body });
    }
    // The two list paths and /content and /card of one card answer alike; the rest differ (a
    // shared view names its owner, so it is not the raw wishlist's bytes).
    expect(byTag.size).toBe(reads().length - 2);
  });

  it('a 304 does not tell another user that a card exists: they get 404', async () => {
    const tag = (await get(s.a, `/content/${s.myo}`)).headers.etag as string;
    const stranger = newUser('stranger');
    const r = await get(stranger, `/content/${s.myo}`, { 'if-none-match': tag });
    expect(r.status).toBe(404);
    expect(errorCode(r)).toBe('not-found');
  });
});

describe('a tag changes whenever the answer does', () => {
  /**
   * Every write path, then every read: a read whose bytes changed must have a new tag (a tag that
   * stayed with new bytes would let a client keep a stale copy), and a write must change the
   * tags of the reads it is known to change.
   */
  it('holds over every kind of write, on every read', async () => {
    const s = await scenario();
    const admin = await adminToken(t);
    const outsider = newUser('outsider');
    const reads: [string, string][] = [
      [s.b, '/content/mine'],
      [s.b, '/content/mine?showdeleted=true'],
      [s.a, `/content/${s.myo}`],
      [s.a, `/content/${s.free}`],
      [s.a, `/card/${s.myo}?playable=true`],
      [s.a, '/user/family'],
      [s.a, '/user/family?showhistory=true'],
      [s.a, '/card/family/library'],
      [s.a, '/card/family/library?showdeleted=true'],
      [s.a, '/card/family/library?view=groups'],
      [s.a, '/card/family/library/groups'],
      [s.a, `/card/family/library/groups/${s.group}`],
      [s.a, `/card/family/library/groups/${s.other}`],
      [s.a, '/wishlists?format=raw'],
      [s.a, '/wishlists'],
      [s.a, `/wishlists/${s.wishlistId}?format=raw`],
      [s.b, `/wishlists/shared/${s.shareId}`],
      [outsider, '/user/family?allowStub=true'],
      [outsider, '/card/family/library'],
    ];
    const snapshot = async (): Promise<Map<string, { tag: string; body: string }>> => {
      const out = new Map<string, { tag: string; body: string }>();
      for (const [user, url] of reads) {
        const r = await get(user, url);
        // A card of a member who left, a deleted group: 404 until they come back.
        if (r.status === 404) out.set(`${user} ${url}`, { tag: '(none)', body: '(not found)' });
        else out.set(`${user} ${url}`, { tag: expectStatus(r, 200).headers.etag as string, body: r.raw.body });
      }
      return out;
    };
    const token = (user: string) => t.token(user, ALL);
    let secondCard = '';
    const writes: [string, () => Promise<unknown>, string[]][] = [
      ['the owner edits a MYO card in the library', async () =>
        expectStatus(await t.call('POST', '/content', { token: await token(s.b), body: { cardId: s.myo, title: 'Renamed' } }), 200),
        [`${s.b} /content/mine`, `${s.a} /content/${s.myo}`, `${s.a} /card/family/library`, `${s.a} /card/family/library/groups/${s.group}`]],
      ['a member makes a new MYO card', async () => {
        secondCard = expectStatus(await t.call('POST', '/content', { token: await token(s.b), body: cardBody('Second') }), 201).body.card.cardId;
      }, [`${s.b} /content/mine`, `${s.a} /card/family/library`]],
      ['a member deletes a MYO card', async () =>
        expectStatus(await t.call('DELETE', `/content/${secondCard}`, { token: await token(s.b) }), 200),
        [`${s.b} /content/mine`, `${s.a} /card/family/library`]],
      ['the admin replaces a catalogue card the library holds', async () =>
        expectStatus(await t.call('PUT', `/admin/cards/${s.free}`, { token: admin, body: catalogueCard('Retitled', 'free') }), 200),
        [`${s.a} /content/${s.free}`, `${s.a} /card/family/library`, `${s.a} /card/family/library/groups/${s.group}`]],
      ['a catalogue card is added to the library', async () => mustAdd(t, s.a, await putCatalogueCard(t, 'club')),
        [`${s.a} /card/family/library`, `${s.a} /user/family?showhistory=true`]],
      ['the admin deletes a catalogue card the library holds', async () =>
        expectStatus(await t.call('PUT', `/admin/cards/${s.free}`, { token: admin, body: catalogueCard('Gone', 'free', { deleted: true }) }), 200),
        [`${s.a} /card/family/library`, `${s.a} /card/family/library?showdeleted=true`]],
      ['a group is updated', async () =>
        expectStatus(await t.call('PUT', `/card/family/library/groups/${s.group}`, { token: await token(s.a), body: { name: 'Night' } }), 200),
        [`${s.a} /card/family/library/groups/${s.group}`, `${s.a} /card/family/library/groups`, `${s.a} /card/family/library?view=groups`, `${s.a} /user/family?showhistory=true`]],
      ['a group is created', async () =>
        expectStatus(await t.call('POST', '/card/family/library/groups', { token: await token(s.a), body: { name: 'New', imageId: 'x', items: [] } }), 201),
        [`${s.a} /card/family/library/groups`, `${s.a} /card/family/library?view=groups`]],
      ['a device is paired', async () =>
        expectStatus(await putFamily(t, s.familyId, { members: [{ userId: s.a, approved: true }, { userId: s.b, approved: true }], devices: [{ deviceId: `dev-${s.familyId}` }] }), 200),
        [`${s.a} /user/family`]],
      ['the family is moved to another country', async () =>
        expectStatus(await putFamily(t, s.familyId, { country: 'GB', members: [{ userId: s.a, approved: true }, { userId: s.b, approved: true }], devices: [{ deviceId: `dev-${s.familyId}` }] }), 200),
        [`${s.a} /user/family`]],
      ['a wishlist is updated', async () =>
        expectStatus(await t.call('PUT', `/wishlists/${s.wishlistId}`, { token: await token(s.a), body: { content: [{ item: 'x' }] } }), 200),
        [`${s.a} /wishlists?format=raw`, `${s.a} /wishlists/${s.wishlistId}?format=raw`, `${s.b} /wishlists/shared/${s.shareId}`]],
      ['a wishlist is created', async () =>
        expectStatus(await t.call('POST', '/wishlists', { token: await token(s.a), body: { content: [] } }), 201),
        [`${s.a} /wishlists?format=raw`, `${s.a} /wishlists`]],
      ['a member leaves the family, taking their MYO card along', async () =>
        expectStatus(await putFamily(t, s.familyId, { members: [{ userId: s.a, approved: true }], devices: [{ deviceId: `dev-${s.familyId}` }] }), 200),
        [`${s.a} /user/family`, `${s.a} /card/family/library`, `${s.a} /card/family/library/groups/${s.group}`]],
      ['the member who left edits their card: the old family\'s answers stay', async () =>
        expectStatus(await t.call('POST', '/content', { token: await token(s.b), body: { cardId: s.myo, title: 'Elsewhere' } }), 200),
        [`${s.b} /content/mine`]],
      ['the member comes back', async () =>
        expectStatus(await putFamily(t, s.familyId, { members: [{ userId: s.a, approved: true }, { userId: s.b, approved: true }], devices: [{ deviceId: `dev-${s.familyId}` }] }), 200),
        [`${s.a} /user/family`, `${s.a} /card/family/library`, `${s.a} /card/family/library/groups/${s.group}`]],
      ['an outsider joins the family', async () =>
        expectStatus(await putFamily(t, s.familyId, { members: [{ userId: s.a, approved: true }, { userId: s.b, approved: true }, { userId: outsider }], devices: [{ deviceId: `dev-${s.familyId}` }] }), 200),
        [`${outsider} /user/family?allowStub=true`, `${outsider} /card/family/library`, `${s.a} /user/family`]],
      ['a group is deleted', async () =>
        expectStatus(await t.call('DELETE', `/card/family/library/groups/${s.other}`, { token: await token(s.a) }), 200),
        [`${s.a} /card/family/library/groups`]],
    ];

    let before = await snapshot();
    const failures: string[] = [];
    for (const [what, write, changes] of writes) {
      await write();
      const after = await snapshot();
      for (const [read, now] of after) {
        const then = before.get(read);
        if (!then) continue;
        if (now.body !== then.body && now.tag === then.tag) failures.push(`${what}: ${read} changed its body but kept its tag`);
        if (now.body === then.body && now.tag !== then.tag && !changes.includes(read)) {
          // A new tag for the same bytes costs one re-send; it is allowed, and listed to be seen.
        }
      }
      for (const read of changes) {
        if (after.get(read)?.tag === before.get(read)?.tag) failures.push(`${what}: ${read} kept its tag`);
      }
      before = after;
    }
    expect(failures).toEqual([]);
  }, 60_000);

  it('another group\'s write leaves a group\'s tag alone', async () => {
    const s = await scenario();
    const url = `/card/family/library/groups/${s.group}`;
    const tag = (await get(s.a, url)).headers.etag;
    expectStatus(await t.call('PUT', `/card/family/library/groups/${s.other}`, { token: await t.token(s.a, ALL), body: { name: 'x' } }), 200);
    expect((await get(s.a, url)).headers.etag).toBe(tag);
  });
});

describe('If-Match refuses lost updates', () => {
  it('PUT of a group: a stale tag is 412 and changes nothing; the current one passes and answers the new tag', async () => {
    const s = await scenario();
    const url = `/card/family/library/groups/${s.group}`;
    const token = await t.token(s.a, ALL);
    const read = expectStatus(await get(s.a, url), 200);
    const tag = read.headers.etag as string;

    const first = expectStatus(await t.call('PUT', url, { token, body: { name: 'From phone 1' }, headers: { 'if-match': tag } }), 200);
    expect(first.headers.etag).not.toBe(tag);
    const stale = await t.call('PUT', url, { token, body: { name: 'From phone 2' }, headers: { 'if-match': tag } });
    expect(stale.status).toBe(412);
    expect(errorCode(stale)).toBe('precondition-failed');
    expect(stale.headers.etag).toBe(first.headers.etag);
    const after = expectStatus(await get(s.a, url), 200);
    expect(after.body.name).toBe('From phone 1');
    expect(after.headers.etag).toBe(first.headers.etag);
    // The tag a write answers is the one a read gives: it chains.
    expectStatus(await t.call('PUT', url, { token, body: { name: 'Again' }, headers: { 'if-match': first.headers.etag as string } }), 200);
  });

  it('PUT of a group with the tag read before a card of its items changed: the group did not change, so it passes', async () => {
    const s = await scenario();
    const url = `/card/family/library/groups/${s.group}`;
    const tag = (await get(s.a, url)).headers.etag as string;
    // Parent B edits their card, which the group shows: the group's answer (and tag) changes.
    expectStatus(await t.call('POST', '/content', { token: await t.token(s.b, ALL), body: { cardId: s.myo, title: 'Edited' } }), 200);
    const reread = await get(s.a, url, { 'if-none-match': tag });
    expect(reread.status).toBe(200);
    expect(reread.headers.etag).not.toBe(tag);
    // Parent A's rename, made on the earlier read, loses nothing of anyone's: it goes through.
    const put = await t.call('PUT', url, { token: await t.token(s.a, ALL), body: { name: 'Renamed' }, headers: { 'if-match': tag } });
    expectStatus(put, 200);
    // But once the group itself changed, that earlier tag is refused.
    const stale = await t.call('PUT', url, { token: await t.token(s.b, ALL), body: { name: 'Other' }, headers: { 'if-match': tag } });
    expect(stale.status).toBe(412);
  });

  it.each([
    ['a weak tag (If-Match compares strongly)', (tag: string) => `W/${tag}`, 412],
    ['another tag', () => '"not-the-tag"', 412],
    ['a list holding the tag', (tag: string) => `"other", ${tag}`, 200],
    ['*', () => '*', 200],
  ])('PUT of a wishlist with %s', async (_what, header, status) => {
    const s = await scenario();
    const token = await t.token(s.a, ALL);
    const tag = (await get(s.a, `/wishlists/${s.wishlistId}?format=raw`)).headers.etag as string;
    const r = await t.call('PUT', `/wishlists/${s.wishlistId}?format=raw`, { token, body: { content: [{ item: 'new' }] }, headers: { 'if-match': header(tag) } });
    expect(r.status).toBe(status);
    const stored = (await get(s.a, `/wishlists/${s.wishlistId}?format=raw`)).body.content[0].item;
    expect(stored).toBe(status === 200 ? 'new' : s.free);
  });

  it('a signed read\'s tag is as good as the raw one for If-Match', async () => {
    const s = await scenario();
    const signed = (await get(s.a, `/wishlists/${s.wishlistId}`)).headers.etag as string;
    expect(signed).toMatch(/\.s\d+-[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{11}"$/);
    const r = await t.call('PUT', `/wishlists/${s.wishlistId}`, {
      token: await t.token(s.a, ALL),
      body: { content: [{ item: 'new' }] },
      headers: { 'if-match': signed },
    });
    expectStatus(r, 200);
  });

  it('POST /content: the update form honours If-Match; the create form cannot match anything', async () => {
    const user = newUser('editor');
    const token = await t.token(user, ALL);
    const created = expectStatus(await t.call('POST', '/content', { token, body: cardBody('Mine') }), 201);
    const cardId = created.body.card.cardId as string;
    const tag = (await get(user, `/content/${cardId}`)).headers.etag as string;
    expect(created.headers.etag).toBe(tag);
    expectStatus(await t.call('POST', '/content', { token, body: { cardId, title: 'One' }, headers: { 'if-match': tag } }), 200);
    const stale = await t.call('POST', '/content', { token, body: { cardId, title: 'Two' }, headers: { 'if-match': tag } });
    expect(stale.status).toBe(412);
    expect(errorCode(stale)).toBe('precondition-failed');
    expect((await get(user, `/content/${cardId}`)).body.card.title).toBe('One');

    const create = await t.call('POST', '/content', { token, body: cardBody('New'), headers: { 'if-match': '*' } });
    expect(create.status).toBe(412);
    expect((await get(user, '/content/mine')).body.cards).toHaveLength(1);
  });

  it.each(['abc', '"unterminated', 'W/abc', '"a" "b"'])('a malformed If-Match (%s) is a 400, and nothing changes', async (header) => {
    const s = await scenario();
    const r = await t.call('PUT', `/card/family/library/groups/${s.group}`, {
      token: await t.token(s.a, ALL),
      body: { name: 'Changed' },
      headers: { 'if-match': header },
    });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
    expect((await get(s.a, `/card/family/library/groups/${s.group}`)).body.name).toBe('Bedtime');
  });

  it('without If-Match the last write wins, as before', async () => {
    const s = await scenario();
    const token = await t.token(s.a, ALL);
    const url = `/card/family/library/groups/${s.group}`;
    expectStatus(await t.call('PUT', url, { token, body: { name: 'One' } }), 200);
    expectStatus(await t.call('PUT', url, { token, body: { name: 'Two' } }), 200);
    expect((await get(s.a, url)).body.name).toBe('Two');
  });

  it.each([
    ['a group', 'group'],
    ['a wishlist', 'wishlist'],
    ['a card', 'card'],
  ])('two clients racing with one tag on %s: exactly one write wins, the other is 412', async (_what, kind) => {
    const s = await scenario();
    const token = await t.token(kind === 'card' ? s.b : s.a, ALL);
    const target = {
      group: { read: `/card/family/library/groups/${s.group}`, method: 'PUT', url: `/card/family/library/groups/${s.group}`, body: (i: number) => ({ name: `writer ${i}` }) },
      wishlist: { read: `/wishlists/${s.wishlistId}?format=raw`, method: 'PUT', url: `/wishlists/${s.wishlistId}?format=raw`, body: (i: number) => ({ content: [{ item: `writer ${i}` }] }) },
      card: { read: `/content/${s.myo}`, method: 'POST', url: '/content', body: (i: number) => ({ cardId: s.myo, title: `writer ${i}` }) },
    }[kind]!;
    const tag = (await get(kind === 'card' ? s.b : s.a, target.read)).headers.etag as string;
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => t.call(target.method, target.url, { token, body: target.body(i), headers: { 'if-match': tag } })),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array<number>(9).fill(412)]);
    const winner = replies.findIndex((r) => r.status === 200);
    const stored = (await get(kind === 'card' ? s.b : s.a, target.read)).body;
    const text = JSON.stringify(stored);
    expect(text).toContain(`writer ${winner}`);
  });
});

describe('reads without a counter: a tag hashed from the answer', () => {
  it('the family images list answers 304 while it is unchanged, and a new tag once an image is added', async () => {
    const user = newUser('images');
    await familyIdOf(t, user);
    const token = await t.token(user, ALL);
    const first = expectStatus(await t.call('GET', '/media/family/images', { token }), 200);
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^"b[A-Za-z0-9_-]{26}"$/);
    const same = await t.call('GET', '/media/family/images', { token, headers: { 'if-none-match': tag } });
    expect(same.status).toBe(304);
    expect(same.raw.body).toBe('');
    expect(same.headers.etag).toBe(tag);
    expect(same.headers['content-type']).toBeUndefined();

    const image = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#39c' } }).png().toBuffer();
    const up = await t.call('POST', '/media/family/images', { token, rawBody: image, headers: { 'content-type': 'image/png' } });
    expectStatus(up, 200);
    const after = await t.call('GET', '/media/family/images', { token, headers: { 'if-none-match': tag } });
    expect(after.status).toBe(200);
    expect(after.body.images).toHaveLength(1);
    expect(after.headers.etag).not.toBe(tag);
  });

  it.each(['/media/displayIcons/user/me', '/media/displayIcons/user/yoto'])('%s carries an ETag and answers 304 to it', async (url) => {
    const token = await t.token(newUser('icons'), ALL);
    const tag = expectStatus(await t.call('GET', url, { token }), 200).headers.etag as string;
    expect(tag).toMatch(/^"b/);
    expect((await t.call('GET', url, { token, headers: { 'if-none-match': `W/${tag}` } })).status).toBe(304);
  });
});

describe('CORS', () => {
  it('a preflight allows the conditional and idempotency request headers, and answers expose ETag', async () => {
    const pre = await t.call('OPTIONS', '/card/family/library/groups/x', {
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'authorization, content-type, if-match, if-none-match, idempotency-key',
      },
    });
    expect(pre.status).toBe(204);
    const allowed = String(pre.headers['access-control-allow-headers']).toLowerCase();
    for (const h of ['if-match', 'if-none-match', 'idempotency-key']) expect(allowed).toContain(h);
    const user = newUser('cors');
    const r = await t.call('GET', '/content/mine', { token: await t.token(user, ALL), headers: { origin: 'https://app.example' } });
    const exposed = String(r.headers['access-control-expose-headers']).toLowerCase();
    for (const h of ['etag', 'idempotent-replayed', 'retry-after']) expect(exposed).toContain(h);
  });
});

it('the family id in a tag: a user moved to another family gets a new tag even at equal counters', async () => {
  const user = newUser('mover');
  const before = (await get(user, '/card/family/library')).headers.etag;
  const stub = await familyIdOf(t, user);
  expectStatus(await putFamily(t, newFamilyId(), { members: [{ userId: user }] }), 201);
  const after = (await get(user, '/card/family/library')).headers.etag;
  expect(await familyIdOf(t, user)).not.toBe(stub);
  expect(after).not.toBe(before);
});
