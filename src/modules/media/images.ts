import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';
import sharp from 'sharp';
import type { Store } from '../../db/dialect.js';
import type { DisplayIconRow } from '../../db/database.js';
import type { MediaStore } from '../../media-store/media-store.js';
import { now } from '../../shared/clock.js';
import { badRequest, notFound } from '../../shared/errors.js';
import type { MediaUrlSigner } from './media-urls.js';
import type { MediaObjects } from './objects.js';
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

export interface Images {
  uploadCover(userId: string, bytes: Buffer, opts: { autoconvert: boolean; coverType?: string }): Promise<{ mediaId: string; mediaUrl: string }>;
  listIcons(ownerId: string): Promise<DisplayIcon[]>;
  uploadIcon(userId: string, bytes: Buffer, opts: { autoConvert: boolean }): Promise<DisplayIcon>;
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

  /** The image's type, from its bytes; anything that is not an image is a 400. */
  async function imageType(bytes: Buffer): Promise<string> {
    if (bytes.length === 0) throw badRequest('A binary image file body is required');
    const type = await fileTypeFromBuffer(bytes);
    if (!type || !type.mime.startsWith('image/')) {
      throw badRequest(`the upload is not an image (${type ? `it looks like ${type.mime}` : 'its type is not recognised'})`);
    }
    return type.mime;
  }

  /** Runs sharp, turning its refusals (a damaged or unsupported image) into 400s. */
  async function convert<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw badRequest(`the image cannot be read: ${(err as Error).message}`);
    }
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
      ...(isPublic ? { title: row.title ?? '', publicTags: JSON.parse(row.public_tags) as string[] } : {}),
    };
  }

  async function addIcon(ownerId: string, png: Buffer, title: string | null, tags: string[]): Promise<DisplayIcon> {
    const mediaId = await keep(ownerId, 'icon', png, 'image/png');
    const row: DisplayIconRow = {
      display_icon_id: randomBytes(12).toString('hex'),
      user_id: ownerId,
      media_id: mediaId,
      title,
      public_tags: JSON.stringify(tags),
      created_at: now(),
    };
    const created = await repo.insertIcon(db, row);
    if (!created && ownerId === PUBLIC_ICONS_OWNER) await repo.updateIcon(db, ownerId, mediaId, title, row.public_tags);
    const stored = await repo.findIconByMedia(db, ownerId, mediaId);
    return { ...icon(stored as DisplayIconRow), ...(created ? { new: true } : {}) };
  }

  /** An icon as the players show it: 16x16 PNG with alpha. */
  async function iconPng(bytes: Buffer, autoConvert: boolean): Promise<Buffer> {
    const mime = await imageType(bytes);
    if (autoConvert) {
      return convert(() => sharp(bytes, { animated: false }).resize(16, 16, { fit: 'cover', position: 'centre' }).ensureAlpha().png().toBuffer());
    }
    const { width, height } = await convert(() => sharp(bytes).metadata());
    if (!['image/png', 'image/gif'].includes(mime) || width !== 16 || height !== 16) {
      throw badRequest('without autoConvert, an icon must be a 16x16 PNG or GIF');
    }
    return bytes;
  }

  return {
    async uploadCover(userId, bytes, opts) {
      const mime = await imageType(bytes);
      let stored = bytes;
      let storedMime = mime;
      if (opts.autoconvert) {
        const size = COVER_SIZES[opts.coverType ?? 'default'] ?? COVER_SIZES.default!;
        const png = mime === 'image/png';
        stored = await convert(() => {
          const img = sharp(bytes, { animated: false }).rotate().resize(size.width, size.height, { fit: 'cover', position: 'centre' });
          return (png ? img.png() : img.jpeg({ quality: 85 })).toBuffer();
        });
        storedMime = png ? 'image/png' : 'image/jpeg';
      } else {
        await convert(() => sharp(bytes).metadata());
      }
      const mediaId = await keep(userId, 'cover', stored, storedMime);
      return { mediaId, mediaUrl: publicUrl(mediaId) };
    },

    async listIcons(ownerId) {
      return (await repo.listIcons(db, ownerId)).map(icon);
    },

    async uploadIcon(userId, bytes, opts) {
      return addIcon(userId, await iconPng(bytes, opts.autoConvert), null, []);
    },

    async putPublicIcon(bytes, opts) {
      return addIcon(PUBLIC_ICONS_OWNER, await iconPng(bytes, true), opts.title ?? null, opts.tags);
    },

    async uploadFamilyImage(familyId, bytes) {
      const mime = await imageType(bytes);
      if (!FAMILY_IMAGE_TYPES.has(mime)) throw badRequest(`family images are JPEG, GIF or PNG, not ${mime}`);
      await convert(() => sharp(bytes).metadata());
      const ownerId = `family:${familyId}`;
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      if (!(await repo.findFamilyImage(db, familyId, sha256)) && (await repo.countFamilyImages(db, familyId)) >= FAMILY_IMAGE_LIMIT) {
        throw badRequest(`a family can upload at most ${FAMILY_IMAGE_LIMIT} images`);
      }
      const imageId = await keep(ownerId, 'family-image', bytes, mime);
      await repo.insertFamilyImage(db, { family_id: familyId, image_id: imageId, size: bytes.length, created_at: now() });
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
      const [width, height] = wanted.split('x').map(Number) as [number, number];
      const source = await new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        mediaStore.read(imageId).on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
      });
      const resized = await convert(() => sharp(source, { animated: false }).resize(width, height, { fit: 'cover', position: 'centre' }).png().toBuffer());
      // A derived object: content-addressed, so asking again stores nothing new.
      const staged = await mediaStore.stage(Readable.from([resized]), resized.length);
      await objects.record(staged, 'image/png');
      return signer.sign(`service:#${staged.sha256}`);
    },
  };
}

