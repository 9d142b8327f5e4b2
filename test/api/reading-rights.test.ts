import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import { adminToken, expectStatus, familyOf, mustAdd, newUser, putCatalogueCard } from '../support/fixtures.js';
import { rowsOf, unpack, type Entry } from '../support/archives.js';
import { holdFamilyImage, uniquePng } from '../support/held-media.js';
import { local, makeAudio, pollTranscode, sha256, startMediaStore, uploadAudio } from '../support/media.js';

/**
 * Reading by hash is not reading by right (issue 17, rows 3 and 4). Users A and B share a
 * family, M has another. A media reference is a name anyone may write: signed URLs (wishlists,
 * playable cards) and family exports give out only the media their reader may read, and a
 * member's export holds only what that member may read.
 */
const ALL = 'user:content:manage family:library:manage';

let t: TestApp;
let mediaStore: Awaited<ReturnType<typeof startMediaStore>>;

const a = newUser('rr-a');
const b = newUser('rr-b');
const m = newUser('rr-m');
const operator = newUser('rr-operator');
let familyId: string;
/** A's upload: its bytes (the source) and the transcode A's card plays. */
let source: Buffer;
let sourceHash: string;
let transcodeHash: string;
/** The image A uploaded for the family, and the icon A uploaded for themselves. */
let familyImage: string;
let aIcon: string;
/** A's live card (in the family library) and A's deleted one. */
let aCard: string;
let aDeleted: string;
/** A free catalogue card and the media it plays (held by the operator's family). */
let catalogue: string;
let catalogueMedia: string;

const token = (user: string): Promise<string> => t.token(user, ALL);

/** A MYO card body whose one chapter has `icon` and plays `tracks`. */
function cardWith(title: string, icon: string, tracks: string[]): Record<string, unknown> {
  return cardBody(title, {
    content: {
      chapters: [
        {
          key: '01',
          title: 'One',
          display: { icon16x16: icon },
          tracks: tracks.map((trackUrl, i) => ({ key: `0${i + 1}`, title: `T${i}`, type: 'audio', format: 'aac', trackUrl })),
        },
      ],
    },
  });
}

async function newCard(user: string, body: Record<string, unknown>): Promise<string> {
  return expectStatus(await t.call('POST', '/content', { token: await token(user), body }), 201).body.card.cardId as string;
}

async function newWishlist(user: string, content: Record<string, unknown>[]): Promise<Reply> {
  return expectStatus(await t.call('POST', '/wishlists', { token: await token(user), body: { content } }), 201);
}

/** Every signed URL of this server's media in an answer, by the hash it serves. */
function signedUrls(body: unknown): Map<string, string> {
  const urls = new Map<string, string>();
  for (const match of JSON.stringify(body).matchAll(/"(http:\/\/localhost:8080\/media\/files\/([0-9a-f]+)\?[^"]+)"/g)) {
    urls.set(match[2]!, match[1]!);
  }
  return urls;
}

/** Fetches the signed URL of `hash` in `body` and insists it serves exactly that object. */
async function expectDownload(body: unknown, hash: string): Promise<void> {
  const url = signedUrls(body).get(hash);
  expect(url, `a signed URL of ${hash}`).toBeDefined();
  const r = await t.call('GET', local(url!));
  expect(r.status).toBe(200);
  expect(sha256(r.raw.rawPayload)).toBe(hash);
}

beforeAll(async () => {
  mediaStore = await startMediaStore();
  t = await startTestApp({ ...mediaStore.env, MEDIA_URL_SECRET: 'reading-rights-secret-0123456789' });
  familyId = await familyOf(t, [a, b]);
  await familyOf(t, [m]);
  await familyOf(t, [operator]);

  source = await makeAudio(1);
  sourceHash = sha256(source);
  const { uploadId } = await uploadAudio(t, await token(a), source, '?filename=a-secret-song.mp3');
  transcodeHash = expectStatus(await pollTranscode(t, await token(a), uploadId), 200).body.transcode.transcodedSha256;
  familyImage = await holdFamilyImage(t, a);
  aIcon = expectStatus(
    await t.call('POST', '/media/displayIcons/user/me/upload', { token: await token(a), rawBody: await uniquePng(), headers: { 'content-type': 'image/png' } }),
    200,
  ).body.displayIcon.mediaId;

  aCard = await newCard(a, cardWith('A plays', `yoto:#${familyImage}`, [`service:#${transcodeHash}`]));
  aDeleted = await newCard(a, cardWith('A deleted this', `yoto:#${familyImage}`, [`service:#${transcodeHash}`]));
  expectStatus(await t.call('DELETE', `/content/${aDeleted}`, { token: await token(a) }), 200);
  await newWishlist(a, [{ item: aCard, note: 'A private note' }]);
  expectStatus(
    await t.call('POST', '/card/family/library/groups', {
      token: await token(a),
      body: { name: 'A group', imageId: familyImage, items: [{ contentId: aCard }] },
    }),
    201,
  );

  catalogueMedia = await holdFamilyImage(t, operator);
  const chapters = (cardWith('x', 'yoto:#none', [`service:#${catalogueMedia}`]).content as { chapters: unknown[] }).chapters;
  catalogue = await putCatalogueCard(t, 'free', { extra: { content: { chapters } } });
  await mustAdd(t, a, catalogue);
}, 120_000);

afterAll(async () => {
  await t?.close();
  await mediaStore?.close();
});

describe('signed URLs for media references', () => {
  it("give M no URL for A's upload, its transcode or A's family image named in M's own wishlist", async () => {
    const content = [
      { item: catalogue, source: `service:#${sourceHash}`, image: `yoto:#${familyImage}`, track: `yoto:#${transcodeHash}` },
      { item: aCard, track: `service:#${transcodeHash}` },
    ];
    const created = await newWishlist(m, content);
    const reads = [
      created.body,
      expectStatus(await t.call('GET', `/wishlists/${created.body.wishlistId}`, { token: await token(m) }), 200).body,
      expectStatus(await t.call('GET', '/wishlists', { token: await token(m) }), 200).body.wishlists[0],
      expectStatus(await t.call('GET', `/wishlists/shared/${created.body.shareId}`, { token: await token(m) }), 200).body,
      expectStatus(await t.call('PUT', `/wishlists/${created.body.wishlistId}`, { token: await token(m), body: { content } }), 200).body,
    ];
    for (const read of reads) {
      // The references stay as stored: nothing to fetch.
      expect(read.content).toEqual(content);
      expect(signedUrls(read).size).toBe(0);
    }
    // And M may not read them another way.
    expect((await t.call('GET', `/media/family/images/${familyImage}`, { token: await token(m) })).status).toBe(404);
  });

  it("give M no URL for A's media named in M's own card read with playable=true", async () => {
    const card = await newCard(m, cardWith('M copies', `yoto:#${familyImage}`, [`service:#${sourceHash}`, `service:#${transcodeHash}`]));
    const r = expectStatus(await t.call('GET', `/content/${card}?playable=true`, { token: await token(m) }), 200);
    const chapter = r.body.card.content.chapters[0];
    expect(chapter.display.icon16x16).toBe(`yoto:#${familyImage}`);
    expect(chapter.tracks.map((track: { trackUrl: string }) => track.trackUrl)).toEqual([`service:#${sourceHash}`, `service:#${transcodeHash}`]);
    expect(signedUrls(r.body).size).toBe(0);
  });

  it("sign A's own references, which download", async () => {
    const wishlist = await newWishlist(a, [{ item: aCard, source: `service:#${sourceHash}`, image: `yoto:#${familyImage}` }]);
    await expectDownload(wishlist.body, sourceHash);
    await expectDownload(wishlist.body, familyImage);
    const card = expectStatus(await t.call('GET', `/card/${aCard}?playable=true`, { token: await token(a) }), 200).body;
    await expectDownload(card, transcodeHash);
    await expectDownload(card, familyImage);
  });

  it("sign for B what A's card in the family library plays, but not A's upload, which no card names", async () => {
    const card = expectStatus(await t.call('GET', `/content/${aCard}?playable=true`, { token: await token(b) }), 200).body;
    await expectDownload(card, transcodeHash);
    await expectDownload(card, familyImage);

    const wishlist = await newWishlist(b, [
      { item: aCard, track: `service:#${transcodeHash}` },
      { item: aCard, source: `service:#${sourceHash}` },
    ]);
    await expectDownload(wishlist.body, transcodeHash);
    expect(wishlist.body.content[1].source).toBe(`service:#${sourceHash}`);
    expect(signedUrls(wishlist.body).has(sourceHash)).toBe(false);
    // A's deleted card is no card B may read: it vouches for nothing.
    const deleted = await newWishlist(b, [{ item: aDeleted, track: `service:#${transcodeHash}` }]);
    expect(signedUrls(deleted.body).size).toBe(0);
  });

  it("sign for M what a free catalogue card named beside it plays, and nothing else M names there", async () => {
    const r = await newWishlist(m, [{ item: catalogue, track: `service:#${catalogueMedia}`, source: `service:#${sourceHash}` }]);
    await expectDownload(r.body, catalogueMedia);
    expect(r.body.content[0].source).toBe(`service:#${sourceHash}`);
    const card = expectStatus(await t.call('GET', `/card/${catalogue}?playable=true`, { token: await token(m) }), 200).body;
    await expectDownload(card, catalogueMedia);
  });
});

/** The archive `GET /user/family/export` gives `user`: its entries, and all its text. */
async function memberExport(user: string): Promise<{ entries: Entry[]; text: string; media: string[] }> {
  const r = await t.app.inject({ method: 'GET', url: '/user/family/export', headers: { authorization: `Bearer ${await token(user)}` } });
  expect(r.statusCode, r.body.slice(0, 300)).toBe(200);
  const entries = await unpack(r.rawPayload);
  const text = entries.filter((e) => !e.name.startsWith('media/')).map((e) => e.data.toString()).join('\n');
  return { entries, text, media: entries.filter((e) => e.name.startsWith('media/')).map((e) => e.name.slice('media/'.length)) };
}

describe('a family export', () => {
  it("for B holds the family's library, groups and live cards, and none of A's private rows or media", async () => {
    const { entries, text, media } = await memberExport(b);
    const cards = rowsOf(entries, 'cards').map((c) => c.card_id);
    expect(cards).toContain(aCard);
    expect(cards).not.toContain(aDeleted);
    expect(rowsOf(entries, 'library_records').map((r) => r.card_id)).toEqual([catalogue]);
    expect(rowsOf(entries, 'library_groups').map((g) => g.name)).toEqual(['A group']);
    expect(rowsOf(entries, 'family_memberships').map((r) => r.user_id).sort()).toEqual([a, b].sort());
    expect(rowsOf(entries, 'wishlists').map((w) => w.user_id).every((owner) => owner === b)).toBe(true);
    expect(rowsOf(entries, 'audio_uploads')).toEqual([]);
    expect(rowsOf(entries, 'display_icons')).toEqual([]);
    expect(new Set(rowsOf(entries, 'media_holdings').map((h) => h.owner_id))).toEqual(new Set([`family:${familyId}`]));
    for (const secret of ['A private note', 'A deleted this', 'a-secret-song']) expect(text).not.toContain(secret);
    // The media the family's rows name and B may read; not A's source, nor A's icon.
    expect(media.sort()).toEqual([familyImage, transcodeHash].sort());
  });

  it("for M does not take A's objects whose hashes M wrote into M's own rows", async () => {
    const own = await holdFamilyImage(t, m);
    await newWishlist(m, [{ item: catalogue, source: `service:#${sourceHash}`, image: `yoto:#${familyImage}`, mine: `service:#${own}` }]);
    await newCard(m, cardWith('M names them', `yoto:#${aIcon}`, [`service:#${transcodeHash}`, `service:#${catalogueMedia}`]));
    const { media } = await memberExport(m);
    // A's icon is public (`/media/public`), as the public service's icons are: it may travel.
    expect(media.sort()).toEqual([own, aIcon].sort());
  });

  it("for A holds A's own uploads, their names and sources, icons and wishlists", async () => {
    const { entries, text, media } = await memberExport(a);
    expect(rowsOf(entries, 'audio_uploads').map((u) => u.filename)).toEqual(['a-secret-song.mp3']);
    expect(rowsOf(entries, 'display_icons').map((i) => i.media_id)).toEqual([aIcon]);
    expect(rowsOf(entries, 'cards').map((c) => c.card_id)).toContain(aDeleted);
    expect(text).toContain('A private note');
    expect(media).toEqual(expect.arrayContaining([sourceHash, transcodeHash, familyImage, aIcon]));
  });

  it("for the operator (/admin/export?familyId=) keeps every member's rows", async () => {
    const r = await t.app.inject({ method: 'GET', url: `/admin/export?familyId=${familyId}`, headers: { authorization: `Bearer ${await adminToken(t)}` } });
    expect(r.statusCode).toBe(200);
    const entries = await unpack(r.rawPayload);
    expect(rowsOf(entries, 'cards').map((c) => c.card_id)).toEqual(expect.arrayContaining([aCard, aDeleted]));
    expect(rowsOf(entries, 'audio_uploads').map((u) => u.filename)).toEqual(['a-secret-song.mp3']);
    expect(rowsOf(entries, 'wishlists').map((w) => w.content).join()).toContain('A private note');
    const media = entries.filter((e) => e.name.startsWith('media/')).map((e) => e.name.slice('media/'.length));
    expect(media).toEqual(expect.arrayContaining([sourceHash, transcodeHash, familyImage, aIcon]));
  });
});
