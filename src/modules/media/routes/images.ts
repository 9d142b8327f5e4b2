import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { SCOPES } from '../../../auth/scopes.js';
import type { App } from '../../../http/route-app.js';
import { badRequest, notFound } from '../../../shared/errors.js';
import { ErrorRef, authErrors } from '../../../shared/schemas.js';
import type { FamilyService } from '../../families/service.js';
import { readImageBody } from '../image-body.js';
import { PUBLIC_ICONS_OWNER, type Images } from '../images.js';
import {
  CoverAnswer,
  CoverQuery,
  DisplayIconAnswer,
  DisplayIconList,
  FamilyImageAnswer,
  FamilyImageList,
  FamilyImageListQuery,
  FamilyImageQuery,
  IconUploadQuery,
  MediaIdParam,
  PublicIconQuery,
} from '../schemas.js';

const tags = ['media'];

export interface ImageRouteOptions {
  images: Images;
  families: FamilyService;
  maxImageBytes: number;
}

/** A request whose body is an image: its bytes, or one file of a multipart form. */
type ImageRequest = { body: unknown; headers: Record<string, string | string[] | undefined> };
/** The image a request sends, read within MEDIA_MAX_IMAGE_BYTES. */
type ImageOf = (req: ImageRequest) => Promise<Buffer>;

/** Images uploaded and listed: covers, display icons (the caller's and the public ones), family images. */
export function imageRoutes(app: App, opts: ImageRouteOptions): void {
  const imageOf: ImageOf = (req) =>
    readImageBody(req.body as Readable | undefined, req.headers['content-type'] as string | undefined, opts.maxImageBytes);
  coverRoutes(app, opts.images, imageOf);
  displayIconRoutes(app, opts.images, imageOf);
  familyImageRoutes(app, opts, imageOf);
}

/** `autoconvert` and `autoConvert`: on unless `false`. */
const on = (flag: string | undefined) => flag !== 'false';

function coverRoutes(app: App, images: Images, imageOf: ImageOf): void {
  app.post('/media/coverImage/user/me/upload', {
    config: { auth: SCOPES.contentManage },
    schema: {
      tags,
      summary: 'Upload a cover image',
      description:
        'The image bytes as the body (or one file of a multipart form). Resized and cropped to the centre for `coverType` unless `autoconvert=false`. `imageUrl` (fetching a remote image) is not supported: 400. `mediaUrl` is a public URL of the image.',
      querystring: CoverQuery,
      response: { 200: CoverAnswer, ...authErrors, 413: ErrorRef },
    },
    handler: async (req) => {
      if (req.query.imageUrl !== undefined) {
        throw badRequest('imageUrl is not supported here: send the image bytes as the body');
      }
      const bytes = await imageOf(req);
      if (bytes.length === 0) throw badRequest('A binary image file body or imageUrl param is required');
      return {
        coverImage: await images.uploadCover(req.principal.userId, bytes, {
          autoconvert: on(req.query.autoconvert),
          coverType: req.query.coverType,
        }),
      };
    },
  });
}

function displayIconRoutes(app: App, images: Images, imageOf: ImageOf): void {
  app.get('/media/displayIcons/user/me', {
    config: { auth: SCOPES.contentView, conditional: 'body' },
    schema: { tags, summary: "The caller's display icons", response: { 200: DisplayIconList, ...authErrors } },
    handler: async (req) => ({ displayIcons: await images.listIcons(req.principal.userId) }),
  });

  app.get('/media/displayIcons/user/yoto', {
    config: { auth: null, conditional: 'body' },
    schema: {
      tags,
      summary: 'The public display icons',
      description: 'Loaded by operators (`POST /admin/media/displayIcons`, `cardshelf seed --demo`).',
      response: { 200: DisplayIconList, ...authErrors },
    },
    handler: async () => ({ displayIcons: await images.listIcons(PUBLIC_ICONS_OWNER) }),
  });

  app.post('/media/displayIcons/user/me/upload', {
    config: { auth: SCOPES.contentManage },
    schema: {
      tags,
      summary: 'Upload a display icon (made a 16x16 PNG)',
      description: 'The same image again answers the icon already made (without `new`).',
      querystring: IconUploadQuery,
      response: { 200: DisplayIconAnswer, ...authErrors, 413: ErrorRef },
    },
    handler: async (req) => ({
      displayIcon: await images.uploadIcon(req.principal.userId, await imageOf(req), { autoConvert: on(req.query.autoConvert), filename: req.query.filename }),
    }),
  });

  app.post('/admin/media/displayIcons', {
    config: { auth: SCOPES.admin },
    schema: {
      tags: ['admin'],
      summary: 'Add a public display icon',
      description: 'The image bytes as the body; made a 16x16 PNG. The same image again updates its title and tags.',
      querystring: PublicIconQuery,
      response: { 200: DisplayIconAnswer, ...authErrors, 413: ErrorRef },
    },
    handler: async (req) => ({
      displayIcon: await images.putPublicIcon(await imageOf(req), {
        title: req.query.title,
        tags: (req.query.tags ?? '').split(',').map((t) => t.trim()).filter(Boolean),
      }),
    }),
  });
}

function familyImageRoutes(app: App, { images, families }: ImageRouteOptions, imageOf: ImageOf): void {
  app.post('/media/family/images', {
    config: { auth: SCOPES.libraryManage },
    schema: {
      tags,
      summary: 'Upload a family image (for library groups)',
      description: 'JPEG, GIF or PNG; at most 500 a family. The id is the SHA-256 of the image: the same image again answers the same id.',
      response: { 200: FamilyImageAnswer, ...authErrors, 413: ErrorRef },
    },
    handler: async (req) =>
      images.uploadFamilyImage(await families.ensureFamilyId(req.principal.userId), await imageOf(req)),
  });

  app.get('/media/family/images', {
    config: { auth: SCOPES.libraryView, conditional: 'body' },
    schema: {
      tags,
      summary: "The family's uploaded images",
      querystring: FamilyImageListQuery,
      response: { 200: FamilyImageList, ...authErrors },
    },
    handler: async (req) => {
      const familyId = await families.findFamilyId(req.principal.userId);
      const limit = req.query.limit === undefined ? undefined : Number(req.query.limit);
      return { images: familyId ? await images.listFamilyImages(familyId, limit) : [] };
    },
  });

  app.get('/media/family/images/:imageId', {
    config: { auth: SCOPES.libraryView },
    schema: {
      tags,
      summary: 'A family image: a redirect (302) to its signed URL',
      description: '`width` and `height` ask for a resized copy: 640x480 or 320x320.',
      params: Type.Object({ imageId: MediaIdParam }),
      querystring: FamilyImageQuery,
      response: { 302: Type.Null(), ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) => {
      const familyId = await families.findFamilyId(req.principal.userId);
      if (!familyId) throw notFound(`image ${req.params.imageId}`);
      const url = await images.familyImageUrl(familyId, req.params.imageId, req.query);
      return reply.code(302).header('location', url).send();
    },
  });
}
