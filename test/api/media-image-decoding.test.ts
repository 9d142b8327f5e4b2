import { crc32, deflateSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import sharp from 'sharp';
import { errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { expectStatus, newUser } from '../support/fixtures.js';
import { local, startMediaStore } from '../support/media.js';

/**
 * Row 8 of issue 17: images are decoded once, at upload, within a pixel limit. Every input sharp
 * is given, in this process (the app runs in it through app.inject), is recorded, so a test can
 * tell whether the original image was decoded again.
 */
const sharpInputs = vi.hoisted(() => [] as unknown[]);
vi.mock('sharp', async (importOriginal) => {
  const real = (await importOriginal<typeof import('sharp')>()).default;
  const counted = new Proxy(real, {
    apply(target, self, args: unknown[]) {
      sharpInputs.push(args[0]);
      return Reflect.apply(target, self, args) as unknown;
    },
  });
  return { default: counted };
});

let t: TestApp;
let mediaStore: Awaited<ReturnType<typeof startMediaStore>>;
beforeAll(async () => {
  mediaStore = await startMediaStore();
  t = await startTestApp({ ...mediaStore.env });
});
afterAll(async () => {
  await t.close();
  await mediaStore.close();
});
beforeEach(() => {
  sharpInputs.length = 0;
});

const LIBRARY = 'family:library:manage';
const CONTENT = 'user:content:manage';

/** A real, valid PNG of `width` x `height` black pixels, 1 bit each: a few KB for 268 megapixels. */
function hugePng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const row = 1 + Math.ceil(width / 8); // a filter byte, then the row's bits
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.alloc(row * height), { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const post = (url: string, token: string, bytes: Buffer) =>
  t.call('POST', url, { token, rawBody: bytes, headers: { 'content-type': 'image/png' } });

describe('image decoding', () => {
  it('refuses a 16383 x 16383 PNG with 413, as a family image, a cover and an icon', async () => {
    const huge = hugePng(16383, 16383);
    expect(huge.length).toBeLessThan(1_000_000);
    expect(await sharp(huge).metadata()).toMatchObject({ width: 16383, height: 16383 });
    sharpInputs.length = 0;
    const family = await t.token(newUser('hugepng'), LIBRARY);
    const mine = await t.token(newUser('hugepng-covers'), CONTENT);
    for (const [url, token] of [
      ['/media/family/images', family],
      ['/media/coverImage/user/me/upload', mine],
      ['/media/displayIcons/user/me/upload', mine],
    ] as const) {
      const r = await post(url, token, huge);
      expect(r.status, url).toBe(413);
      expect(errorCode(r)).toBe('payload-too-large');
      expect(r.body.error.message).toMatch(/limited to 40000000 pixels.*16383 x 16383/);
    }
    expect(expectStatus(await t.call('GET', '/media/family/images', { token: family }), 200).body.images).toEqual([]);
  });

  it('makes the sizes of a family image at upload: resized reads never decode the original again', async () => {
    const token = await t.token(newUser('sizes'), LIBRARY);
    const original = await sharp({ create: { width: 1200, height: 900, channels: 3, background: '#2a6' } }).png().toBuffer();
    const { imageId } = expectStatus(await post('/media/family/images', token, original), 200).body;
    const decodesOfOriginal = (): number => sharpInputs.filter((input) => Buffer.isBuffer(input) && input.equals(original)).length;
    // The upload itself reads the original: its header, then one decode that every size is cut from.
    expect(decodesOfOriginal()).toBe(2);
    sharpInputs.length = 0;

    const reads = await Promise.all(
      ['640x480', '640x480', '640x480', '640x480', '320x320', '320x320'].map((size) => {
        const [width, height] = size.split('x');
        return t.call('GET', `/media/family/images/${imageId}?width=${width}&height=${height}`, { token });
      }),
    );
    for (const r of reads) expect(r.status).toBe(302);
    expect(new Set(reads.map((r) => new URL(r.headers.location as string).pathname)).size).toBe(2);
    expect(decodesOfOriginal()).toBe(0);
    expect(sharpInputs).toEqual([]);

    const served = await t.call('GET', local(reads[0]!.headers.location as string));
    expect(served.status).toBe(200);
    expect(await sharp(served.raw.rawPayload).metadata()).toMatchObject({ format: 'png', width: 640, height: 480 });
    const small = await t.call('GET', local(reads[5]!.headers.location as string));
    expect(await sharp(small.raw.rawPayload).metadata()).toMatchObject({ width: 320, height: 320 });
  });
});
