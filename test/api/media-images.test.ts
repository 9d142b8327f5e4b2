import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { cardBody, errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { adminToken, expectStatus, newUser } from '../support/fixtures.js';
import { local, sha256, startMediaStore } from '../support/media.js';
import { familyImageRow, mediaObjectRow } from '../support/rows.js';
import { openStore } from '../../src/db/store.js';

const CONTENT = 'user:content:manage';
const LIBRARY = 'family:library:manage';

let t: TestApp;
let mediaStore: Awaited<ReturnType<typeof startMediaStore>>;
beforeAll(async () => {
  mediaStore = await startMediaStore();
  t = await startTestApp({ ...mediaStore.env, MEDIA_MAX_IMAGE_BYTES: '300000' });
});
afterAll(async () => {
  await t.close();
  await mediaStore.close();
});

const png = (width: number, height: number, color = '#c03') =>
  sharp({ create: { width, height, channels: 4, background: color } }).png().toBuffer();
const jpeg = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#39c' } }).jpeg().toBuffer();

async function post(url: string, token: string, bytes: Buffer, type = 'application/octet-stream') {
  return t.call('POST', url, { token, rawBody: bytes, headers: { 'content-type': type } });
}

/** A multipart/form-data body with one file field, as FormData sends it. */
function multipart(bytes: Buffer, field = 'file'): { body: Buffer; type: string } {
  const boundary = '----cardshelf' + Date.now();
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="icon.png"\r\nContent-Type: image/png\r\n\r\n`),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

describe('cover images', () => {
  it('resizes and crops an uploaded image to the default cover size, and serves it at mediaUrl', async () => {
    const token = await t.token(newUser('cover'), CONTENT);
    const r = expectStatus(await post('/media/coverImage/user/me/upload', token, await png(400, 300), 'image/png'), 200);
    expect(r.body.coverImage.mediaId).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.coverImage.mediaUrl).toBe(`http://localhost:8080/media/public/${r.body.coverImage.mediaId}`);
    const image = await t.call('GET', local(r.body.coverImage.mediaUrl));
    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    const meta = await sharp(image.raw.rawPayload).metadata();
    expect([meta.width, meta.height]).toEqual([638, 1011]);
  });

  it('sizes for coverType, keeps a JPEG a JPEG, and stores the image as sent with autoconvert=false', async () => {
    const token = await t.token(newUser('cover2'), CONTENT);
    const r = expectStatus(await post('/media/coverImage/user/me/upload?coverType=podcast&autoconvert=true', token, await jpeg(900, 500), 'image/jpeg'), 200);
    const meta = await sharp((await t.call('GET', local(r.body.coverImage.mediaUrl))).raw.rawPayload).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 600, 600]);

    const original = await png(50, 70);
    const kept = expectStatus(await post('/media/coverImage/user/me/upload?autoconvert=false', token, original), 200);
    expect(kept.body.coverImage.mediaId).toBe(sha256(original));
  });

  it.each([
    ['imageUrl (not supported)', '?imageUrl=http://127.0.0.1/x.png', Buffer.alloc(0)],
    ['no body', '', Buffer.alloc(0)],
    ['text', '', Buffer.from('not an image at all, just words '.repeat(10))],
    ['an unknown coverType', '?coverType=poster', Buffer.from('x')],
  ])('refuses %s with 400', async (_what, query, body) => {
    const token = await t.token(newUser('badcover'), CONTENT);
    const r = await post(`/media/coverImage/user/me/upload${query}`, token, body);
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
  });

  it('refuses an image over the size limit with 413', async () => {
    const token = await t.token(newUser('huge'), CONTENT);
    const r = await post('/media/coverImage/user/me/upload', token, Buffer.alloc(400_000, 1), 'image/png');
    expect(r.status).toBe(413);
    expect(errorCode(r)).toBe('payload-too-large');
  });

  it('asks for user:content:manage', async () => {
    const viewer = await t.token(newUser('viewer'), 'user:content:view');
    expect((await post('/media/coverImage/user/me/upload', viewer, await png(10, 10))).status).toBe(403);
  });
});

describe('display icons', () => {
  it("makes an upload a 16x16 PNG, lists it among the caller's icons only, and answers the same icon for the same image", async () => {
    const user = newUser('iconic');
    const token = await t.token(user, CONTENT);
    const source = await png(64, 48, '#0a0');
    const first = expectStatus(await post('/media/displayIcons/user/me/upload?filename=leaf', token, source, 'image/png'), 200).body.displayIcon;
    expect(first).toMatchObject({ userId: user, new: true, public: false });
    const icon = await t.call('GET', local(first.url));
    const meta = await sharp(icon.raw.rawPayload).metadata();
    expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual(['png', 16, 16, true]);
    expect(sha256(icon.raw.rawPayload)).toBe(first.mediaId);

    const again = expectStatus(await post('/media/displayIcons/user/me/upload', token, source), 200).body.displayIcon;
    expect(again.displayIconId).toBe(first.displayIconId);
    expect(again.new).toBeUndefined();

    const mine = expectStatus(await t.call('GET', '/media/displayIcons/user/me', { token: await t.token(user, 'user:content:view') }), 200);
    expect(mine.body.displayIcons.map((i: any) => i.displayIconId)).toEqual([first.displayIconId]);
    const other = await t.token(newUser('other'), CONTENT);
    expect(expectStatus(await t.call('GET', '/media/displayIcons/user/me', { token: other }), 200).body.displayIcons).toEqual([]);
  });

  it('takes a multipart form (as the public tutorial sends it)', async () => {
    const token = await t.token(newUser('formdata'), CONTENT);
    const { body, type } = multipart(await png(32, 32, '#00f'));
    const r = expectStatus(await post('/media/displayIcons/user/me/upload?autoConvert=true', token, body, type), 200);
    expect(r.body.displayIcon.new).toBe(true);
  });

  it('without autoConvert, takes a 16x16 PNG or GIF as it is, served as its own type, and refuses anything else', async () => {
    const token = await t.token(newUser('strict'), CONTENT);
    const exact = await png(16, 16, '#ff0');
    const ok = expectStatus(await post('/media/displayIcons/user/me/upload?autoConvert=false', token, exact), 200);
    expect(ok.body.displayIcon.mediaId).toBe(sha256(exact));
    const served = await t.call('GET', local(ok.body.displayIcon.url));
    expect(served.headers['content-type']).toBe('image/png');
    // A GIF is kept as it is, and served as what it is.
    const gif = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#0f0' } }).gif().toBuffer();
    const kept = expectStatus(await post('/media/displayIcons/user/me/upload?autoConvert=false', token, gif, 'image/gif'), 200);
    expect(kept.body.displayIcon.mediaId).toBe(sha256(gif));
    const gifServed = await t.call('GET', local(kept.body.displayIcon.url));
    expect(gifServed.status).toBe(200);
    expect(gifServed.headers['content-type']).toBe('image/gif');
    expect(gifServed.raw.rawPayload.equals(gif)).toBe(true);
    const wrong = await post('/media/displayIcons/user/me/upload?autoConvert=false', token, await png(20, 16));
    expect(wrong.status).toBe(400);
    expect(errorCode(wrong)).toBe('bad-request');
  });

  it('lists public icons, loaded through the admin API, to any signed-in user', async () => {
    const admin = await adminToken(t);
    const added = expectStatus(
      await post('/admin/media/displayIcons?title=Star&tags=shapes,%20yellow', admin, await png(40, 40, '#fc0')),
      200,
    ).body.displayIcon;
    expect(added).toMatchObject({ userId: 'yoto', public: true, title: 'Star', publicTags: ['shapes', 'yellow'] });
    const anyone = await t.token(newUser('anyone'), '');
    const list = expectStatus(await t.call('GET', '/media/displayIcons/user/yoto', { token: anyone }), 200).body.displayIcons;
    expect(list.map((i: any) => i.mediaId)).toContain(added.mediaId);
    const user = await t.token(newUser('notadmin'), CONTENT);
    expect((await post('/admin/media/displayIcons', user, await png(40, 40))).status).toBe(403);
  });

  it("is usable as a chapter's display.icon16x16, signed on a playable read", async () => {
    const token = await t.token(newUser('iconcard'), CONTENT);
    const icon = expectStatus(await post('/media/displayIcons/user/me/upload', token, await png(30, 30, '#f0f')), 200).body.displayIcon;
    const body = cardBody('Icon card');
    (body.content as any).chapters[0].display = { icon16x16: `service:#${icon.mediaId}` };
    const cardId = expectStatus(await t.call('POST', '/content', { token, body }), 201).body.card.cardId;
    const read = expectStatus(await t.call('GET', `/content/${cardId}?playable=true`, { token }), 200);
    const served = await t.call('GET', local(read.body.card.content.chapters[0].display.icon16x16));
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(sha256(served.raw.rawPayload)).toBe(icon.mediaId);
  });
});

describe('family images', () => {
  it('uploads an image (its id is its SHA-256), lists it, and redirects to a signed URL of it', async () => {
    const token = await t.token(newUser('fam'), LIBRARY);
    const image = await png(200, 150, '#123');
    const r = expectStatus(await post('/media/family/images', token, image, 'image/png'), 200);
    expect(r.body).toEqual({ imageId: sha256(image), url: `http://localhost:8080/media/family/images/${sha256(image)}` });
    expectStatus(await post('/media/family/images', token, image, 'image/png'), 200); // the same again: one image

    const list = expectStatus(await t.call('GET', '/media/family/images', { token }), 200).body.images;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ imageId: sha256(image), size: image.length, eTag: `"${sha256(image)}"` });

    const redirect = await t.call('GET', `/media/family/images/${sha256(image)}`, { token });
    expect(redirect.status).toBe(302);
    const bytes = await t.call('GET', local(redirect.headers.location as string));
    expect(bytes.status).toBe(200);
    expect(bytes.raw.rawPayload.equals(image)).toBe(true);

    const small = await t.call('GET', `/media/family/images/${sha256(image)}?width=320&height=320`, { token });
    expect(small.status).toBe(302);
    const meta = await sharp((await t.call('GET', local(small.headers.location as string))).raw.rawPayload).metadata();
    expect([meta.width, meta.height]).toEqual([320, 320]);

    const odd = await t.call('GET', `/media/family/images/${sha256(image)}?width=100&height=100`, { token });
    expect(odd.status).toBe(400);
  });

  it("answers another family's image, and a missing one, with 404", async () => {
    const owner = await t.token(newUser('famowner'), LIBRARY);
    const image = await png(20, 20, '#456');
    const { imageId } = expectStatus(await post('/media/family/images', owner, image), 200).body;
    const stranger = await t.token(newUser('famstranger'), LIBRARY);
    for (const id of [imageId, '0'.repeat(64)]) {
      const r = await t.call('GET', `/media/family/images/${id}`, { token: stranger });
      expect(r.status).toBe(404);
      expect(errorCode(r)).toBe('not-found');
    }
    expect(expectStatus(await t.call('GET', '/media/family/images', { token: stranger }), 200).body.images).toEqual([]);
  });

  it('takes JPEG, GIF and PNG only, and asks for the family library scopes', async () => {
    const token = await t.token(newUser('famtypes'), LIBRARY);
    expectStatus(await post('/media/family/images', token, await jpeg(30, 30)), 200);
    const webp = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } }).webp().toBuffer();
    const refused = await post('/media/family/images', token, webp);
    expect(refused.status).toBe(400);
    const viewer = await t.token(newUser('famviewer'), 'family:library:view');
    expect((await post('/media/family/images', viewer, await jpeg(30, 30))).status).toBe(403);
    expect((await t.call('GET', '/media/family/images', { token: viewer })).status).toBe(200);
  });

  it('keeps the limit of 500 under concurrent uploads: at 499, one of eight at once is taken', async () => {
    const token = await t.token(newUser('famlimit'), LIBRARY);
    const first = expectStatus(await post('/media/family/images', token, await png(12, 12, '#010101')), 200).body.imageId;
    const store = openStore(t.config.database);
    try {
      const { family_id: familyId } = await store.db
        .selectFrom('family_images')
        .select('family_id')
        .where('image_id', '=', first)
        .executeTakeFirstOrThrow();
      const filler = Array.from({ length: 498 }, (_, i) =>
        familyImageRow({ family_id: familyId, image_id: sha256(`filler ${i}`), size: 1, created_at: new Date().toISOString() }),
      );
      await store.db
        .insertInto('media_objects')
        .values(filler.map((f) => mediaObjectRow({ sha256: f.image_id, size: 1, content_type: 'image/png', created_at: f.created_at })))
        .execute();
      await store.db.insertInto('family_images').values(filler).execute();
      const images = await Promise.all(Array.from({ length: 8 }, (_, i) => png(12, 12, `#${i}0${i}0ff`)));
      const answers = await Promise.all(images.map((image) => post('/media/family/images', token, image)));
      expect(answers.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
      for (const refused of answers.filter((r) => r.status === 400)) expect(refused.body.error.message).toMatch(/at most 500 images/);
      const { n } = await store.db
        .selectFrom('family_images')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('family_id', '=', familyId)
        .executeTakeFirstOrThrow();
      expect(Number(n)).toBe(500);
      // An image already there is no new one: still answered at the limit.
      expectStatus(await post('/media/family/images', token, await png(12, 12, '#010101')), 200);
    } finally {
      await store.db.destroy();
    }
  });

  it("gives a group named by a family image an imageUrl at the family image endpoint", async () => {
    const token = await t.token(newUser('famgroup'), LIBRARY);
    const { imageId } = expectStatus(await post('/media/family/images', token, await png(24, 24, '#789')), 200).body;
    const group = expectStatus(
      await t.call('POST', '/card/family/library/groups', { token, body: { name: 'Bedtime', imageId, items: [] } }),
      201,
    ).body;
    expect(group.imageUrl).toBe(`http://localhost:8080/media/family/images/${imageId}`);
  });
});

