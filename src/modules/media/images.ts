import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';
import { LRUCache } from 'lru-cache';
import type { OutputInfo } from 'sharp';
import type { Store } from '../../db/dialect.js';
import type { DisplayIconRow } from '../../db/database.js';
import { familyLock, inUnitOfWork, type Db } from '../../db/unit-of-work.js';
import type { MediaStore } from '../../media-store/media-store.js';
import { now } from '../../shared/clock.js';
import { badRequest, notFound } from '../../shared/errors.js';
import { decode, imageWork, readableImage, sharp } from './image-work.js';
import type { MediaUrlSigner } from './media-urls.js';
import { isStored, type MediaObjects } from './objects.js';
import * as repo from './repository.js';

/** Sizes of cover images by `coverType` (the public documentation's table), width x height. */
export const COVER_SIZES: Record<string, { width: number; height: number }> = {
  default: { width: 638, height: 1011 },
  activities: { width: 638, height: 1011 },
  music: { width: 638, height: 1011 },
  stories: { width: 638, height: 1011 },
  sfx: { width: 638, height: 1011 },
  myo: { width: 520, height: 400 },
  podcast: { width: 600, height: 600 },
  radio: { width: 600, height: 600 },
};

/** Sizes a family image may be asked for in (the public documentation's list). */
export const FAMILY_IMAGE_SIZES = ['640x480', '320x320'];
/** Family images whose sized copies one process remembers (a few hundred bytes each). */
const REMEMBERED_FAMILY_IMAGES = 10_000;
/** A family may upload this many images (as the public service). */
export const FAMILY_IMAGE_LIMIT = 500;
/** The owner id of the public icons, as the public service names them. */
export const PUBLIC_ICONS_OWNER = 'yoto';

const FAMILY_IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif']);

export interface DisplayIcon {
  displayIconId: string;
  mediaId: string;
  userId: string;
  createdAt: string;
  url: string;
  public: boolean;
  title?: string;
  publicTags?: string[];
  new?: boolean;
}

/** Longest title an uploaded icon takes from its file name (the admin API's `title` limit). */
export const ICON_TITLE_LENGTH = 200;

/**
 * An uploaded icon's title, from the `filename` the upload names: the name without folders or
 * extension ("photos/Rocket ship.png" -> "Rocket ship"), its first ICON_TITLE_LENGTH characters;
 * none when that leaves nothing.
 */
export function iconTitle(filename: string | undefined): string | null {
  const base = (filename ?? '').split(/[\\/]/).pop()!.replace(/\.[^.]*$/, '').trim();
  return base === '' ? null : [...base].slice(0, ICON_TITLE_LENGTH).join('');
}

/** An icon as stored: made a PNG, or kept as sent (a 16x16 PNG or GIF). */
interface IconImage {
  bytes: Buffer;
  mime: string;
}

export interface Images {
  uploadCover(userId: string, bytes: Buffer, opts: { autoconvert: boolean; coverType?: string }): Promise<{ mediaId: string; mediaUrl: string }>;
  listIcons(ownerId: string): Promise<DisplayIcon[]>;
  /** `filename`, when sent, titles the icon (iconTitle): the same image again with another retitles it. */
  uploadIcon(userId: string, bytes: Buffer, opts: { autoConvert: boolean; filename?: string }): Promise<DisplayIcon>;
  /** Adds (or retitles) a public icon: the admin API and the demo seed. */
  putPublicIcon(bytes: Buffer, opts: { title?: string; tags: string[] }): Promise<DisplayIcon>;
  uploadFamilyImage(familyId: string, bytes: Buffer): Promise<{ imageId: string; url: string }>;
  listFamilyImages(familyId: string, limit: number | undefined): Promise<{ eTag: string; imageId: string; lastModified: string; size: number }[]>;
  /** The signed URL of a family image, resized when a supported size is asked for. */
  familyImageUrl(familyId: string, imageId: string, size: { width?: string; height?: string }): Promise<string>;
}

export function createImages(deps: {
  store: Store;
  mediaStore: MediaStore;
  objects: MediaObjects;
  signer: MediaUrlSigner;
  publicBaseUrl: string;
}): Images {
  const { store, mediaStore, objects, signer, publicBaseUrl } = deps;
  const { db } = store;
  const publicUrl = (mediaId: string): string => `${publicBaseUrl}/media/public/${mediaId}`;
  const renditions = new LRUCache<string, Promise<Record<string, string>>>({ max: REMEMBERED_FAMILY_IMAGES });

  /** The image's type, from its bytes; anything that is not an image is a 400. */
  async function imageType(bytes: Buffer): Promise<string> {
    if (bytes.length === 0) throw badRequest('A binary image file body is required');
    const type = await fileTypeFromBuffer(bytes);
    if (!type || !type.mime.startsWith('image/')) {
      throw badRequest(`the upload is not an image (${type ? `it looks like ${type.mime}` : 'its type is not recognised'})`);
    }
    return type.mime;
  }

  async function keep(ownerId: string, kind: 'cover' | 'icon' | 'family-image', bytes: Buffer, mime: string): Promise<string> {
    const staged = await mediaStore.stage(Readable.from([bytes]), bytes.length);
    await objects.keep(ownerId, kind, staged, mime);
    return staged.sha256;
  }

  function icon(row: DisplayIconRow): DisplayIcon {
    const isPublic = row.user_id === PUBLIC_ICONS_OWNER;
    return {
      displayIconId: row.display_icon_id,
      mediaId: row.media_id,
      userId: row.user_id,
      createdAt: row.created_at,
      url: publicUrl(row.media_id),
      public: isPublic,
      ...(isPublic ? { title: row.title ?? '', publicTags: JSON.parse(row.public_tags) as string[] } : row.title === null ? {} : { title: row.title }),
    };
  }

  async function addIcon(ownerId: string, image: IconImage, title: string | null, tags: string[]): Promise<DisplayIcon> {
    const mediaId = await keep(ownerId, 'icon', image.bytes, image.mime);
    const row: DisplayIconRow = {
      display_icon_id: randomBytes(12).toString('hex'),
      user_id: ownerId,
      media_id: mediaId,
      title,
      public_tags: JSON.stringify(tags),
      created_at: now(),
    };
    const created = await repo.insertIcon(db, row);
    // A public icon is retitled (and retagged) by the operator; one's own by a new name only.
    if (!created && (ownerId === PUBLIC_ICONS_OWNER || title !== null)) await repo.updateIcon(db, ownerId, mediaId, title, row.public_tags);
    const stored = await repo.findIconByMedia(db, ownerId, mediaId);
    return { ...icon(stored as DisplayIconRow), ...(created ? { new: true } : {}) };
  }

  async function withinFamilyImageLimit(trx: Db, familyId: string): Promise<void> {
    if ((await repo.countFamilyImages(trx, familyId)) >= FAMILY_IMAGE_LIMIT) {
      throw badRequest(`a family can upload at most ${FAMILY_IMAGE_LIMIT} images`);
    }
  }

  /** An icon as the players show it: 16x16 PNG with alpha. */
  async function iconImage(bytes: Buffer, autoConvert: boolean): Promise<IconImage> {
    const mime = await imageType(bytes);
    if (autoConvert) {
      await readableImage(bytes);
      const png = await imageWork(() => decode(bytes, { animated: false }).resize(16, 16, { fit: 'cover', position: 'centre' }).ensureAlpha().png().toBuffer());
      return { bytes: png, mime: 'image/png' };
    }
    const { width, height } = await readableImage(bytes);
    if (!['image/png', 'image/gif'].includes(mime) || width !== 16 || height !== 16) {
      throw badRequest('without autoConvert, an icon must be a 16x16 PNG or GIF');
    }
    // Kept as sent, so served as what it is: a GIF stays image/gif.
    return { bytes, mime };
  }

  return {
    async uploadCover(userId, bytes, opts) {
      const mime = await imageType(bytes);
      let stored = bytes;
      let storedMime = mime;
      await readableImage(bytes);
      if (opts.autoconvert) {
        const size = COVER_SIZES[opts.coverType ?? 'default'] ?? COVER_SIZES.default!;
        const png = mime === 'image/png';
        stored = await imageWork(() => {
          const img = decode(bytes, { animated: false }).rotate().resize(size.width, size.height, { fit: 'cover', position: 'centre' });
          return (png ? img.png() : img.jpeg({ quality: 85 })).toBuffer();
        });
        storedMime = png ? 'image/png' : 'image/jpeg';
      }
      const mediaId = await keep(userId, 'cover', stored, storedMime);
      return { mediaId, mediaUrl: publicUrl(mediaId) };
    },

    async listIcons(ownerId) {
      return (await repo.listIcons(db, ownerId)).map(icon);
    },

    async uploadIcon(userId, bytes, opts) {
      return addIcon(userId, await iconImage(bytes, opts.autoConvert), iconTitle(opts.filename), []);
    },

    async putPublicIcon(bytes, opts) {
      return addIcon(PUBLIC_ICONS_OWNER, await iconImage(bytes, true), opts.title ?? null, opts.tags);
    },

    async uploadFamilyImage(familyId, bytes) {
      const mime = await imageType(bytes);
      if (!FAMILY_IMAGE_TYPES.has(mime)) throw badRequest(`family images are JPEG, GIF or PNG, not ${mime}`);
      await readableImage(bytes);
      const ownerId = `family:${familyId}`;
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      // Refused before the bytes are stored when the family is plainly at its limit...
      if (!(await repo.findFamilyImage(db, familyId, sha256))) await withinFamilyImageLimit(db, familyId);
      const imageId = await keep(ownerId, 'family-image', bytes, mime);
      // ...and decided under the family's lock, so that concurrent uploads cannot pass it together.
      await inUnitOfWork(store, [familyLock(familyId)], async (trx) => {
        if (await repo.findFamilyImage(trx, familyId, imageId)) return;
        await withinFamilyImageLimit(trx, familyId);
        await repo.insertFamilyImage(trx, { family_id: familyId, image_id: imageId, size: bytes.length, created_at: now() });
      });
      // Its sizes are made now, from the bytes at hand: reads then never decode the original.
      await familySizes(imageId, bytes);
      return { imageId, url: `${publicBaseUrl}/media/family/images/${imageId}` };
    },

    async listFamilyImages(familyId, limit) {
      return (await repo.listFamilyImages(db, familyId, limit)).map((row) => ({
        eTag: `"${row.image_id}"`,
        imageId: row.image_id,
        lastModified: row.created_at,
        size: Number(row.size),
      }));
    },

    async familyImageUrl(familyId, imageId, size) {
      const image = await repo.findFamilyImage(db, familyId, imageId);
      if (!image) throw notFound(`image ${imageId}`);
      if (size.width === undefined && size.height === undefined) return signer.sign(`service:#${imageId}`);
      const wanted = `${size.width}x${size.height}`;
      if (!FAMILY_IMAGE_SIZES.includes(wanted)) {
        throw badRequest(`family images come in ${FAMILY_IMAGE_SIZES.join(' and ')} (width x height), not ${wanted}`);
      }
      let sized = (await familySizes(imageId))[wanted]!;
      // Made by another process, or removed since by garbage collection: made again, once.
      if (!(await isStored(store, mediaStore, sized))) {
        renditions.delete(imageId);
        sized = (await familySizes(imageId))[wanted]!;
      }
      return signer.sign(`service:#${sized}`);
    },
  };

  /**
   * The hashes of a family image's sized copies (FAMILY_IMAGE_SIZES), made from one decode of the
   * original and stored; remembered (concurrent askers share one making), so the original is
   * decoded once per process, not per read. `source` is the original when the caller has it.
   */
  function familySizes(imageId: string, source?: Buffer): Promise<Record<string, string>> {
    let made = renditions.get(imageId);
    if (!made) {
      made = makeFamilySizes(imageId, source);
      renditions.set(imageId, made);
      made.catch(() => renditions.delete(imageId));
    }
    return made;
  }

  async function makeFamilySizes(imageId: string, given: Buffer | undefined): Promise<Record<string, string>> {
    const source = given ?? (await readWhole(imageId));
    const sizes = FAMILY_IMAGE_SIZES.map((size) => size.split('x').map(Number) as [number, number]);
    // One decode, scaled so that every size can be cropped from it at full resolution.
    const covering = { width: Math.max(...sizes.map(([w]) => w)), height: Math.max(...sizes.map(([, h]) => h)) };
    const { data, info } = await imageWork<{ data: Buffer; info: OutputInfo }>(() =>
      decode(source, { animated: false }).resize({ ...covering, fit: 'outside' }).raw().toBuffer({ resolveWithObject: true }),
    );
    const hashes: Record<string, string> = {};
    for (const [width, height] of sizes) {
      const resized = await imageWork(() =>
        sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } })
          .resize(width, height, { fit: 'cover', position: 'centre' })
          .png()
          .toBuffer(),
      );
      // A derived object: content-addressed, so making it again stores nothing new.
      const staged = await mediaStore.stage(Readable.from([resized]), resized.length);
      await objects.record(staged, 'image/png');
      hashes[`${width}x${height}`] = staged.sha256;
    }
    return hashes;
  }

  function readWhole(sha256: string): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      mediaStore.read(sha256).on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
    });
  }
}

