import pLimit from 'p-limit';
import type sharpModule from 'sharp';
import type { Metadata, Sharp, SharpOptions } from 'sharp';
import { AppError, badRequest } from '../../shared/errors.js';

/**
 * The most pixels (width x height) an uploaded image may have: 40 megapixels, a large camera
 * photo. Decoding holds the whole bitmap (up to 4 bytes a pixel, so about 160 MB here); sharp's
 * own default (268 megapixels, a 16383 x 16383 image) would let one small, well-compressed
 * upload take gigabytes.
 */
export const MAX_IMAGE_PIXELS = 40_000_000;

/**
 * Images decoded at once by one process. Each decode may hold a bitmap of up to the pixel
 * limit and keeps a thread of libuv's pool (4 by default, which file and DNS work share) busy;
 * more work waits its turn instead of all of it running at once.
 */
export const IMAGE_WORK_CONCURRENCY = 2;

const queue = pLimit(IMAGE_WORK_CONCURRENCY);

let loaded: typeof sharpModule | undefined;
let loading: Promise<typeof sharpModule> | undefined;

/**
 * sharp is loaded by the first image work (`imageWork`), not when the server starts: its image
 * library is a few MB of every process's memory, and most processes never decode an image.
 */
function loadSharp(): Promise<typeof sharpModule> {
  return (loading ??= import('sharp').then((m) => (loaded = m.default)));
}

/** sharp itself, for the work `imageWork` runs (which has loaded it by then). */
export function sharp(...args: Parameters<typeof sharpModule>): Sharp {
  if (!loaded) throw new Error('sharp is used outside imageWork, before it is loaded');
  return loaded(...args);
}

/** A sharp pipeline reading `input`, refusing to decode more than the pixel limit. */
export function decode(input: Buffer, opts: SharpOptions = {}): Sharp {
  return sharp(input, { limitInputPixels: MAX_IMAGE_PIXELS, ...opts });
}

/**
 * Runs image work in its turn (at most IMAGE_WORK_CONCURRENCY at once), turning sharp's refusals
 * (a damaged or unsupported image) into 400s.
 */
export function imageWork<T>(work: () => Promise<T>): Promise<T> {
  return queue(async () => {
    // Outside the try: a library that fails to load is the server's fault, not the image's.
    await loadSharp();
    try {
      return await work();
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw badRequest(`the image cannot be read: ${(err as Error).message}`);
    }
  });
}

/**
 * The image's header (no pixel is decoded), refusing with 413 an image of more pixels than the
 * limit: the check costs nothing, and no later step has to decode it to find out.
 */
export async function readableImage(bytes: Buffer): Promise<Metadata> {
  const meta = await imageWork(() => sharp(bytes).metadata());
  const { width = 0, height = 0 } = meta;
  // An animated image is decoded a frame at a time (animated: false takes the first).
  if (width * height > MAX_IMAGE_PIXELS) {
    throw new AppError(
      'payload-too-large',
      `images are limited to ${MAX_IMAGE_PIXELS} pixels (width x height); this one is ${width} x ${height}`,
    );
  }
  return meta;
}
