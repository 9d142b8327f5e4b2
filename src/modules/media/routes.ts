import type { FastifyReply } from 'fastify';
import { SCOPES } from '../../auth/scopes.js';
import { isOn } from '../../shared/query-flags.js';
import { ErrorRef, authErrors } from '../../shared/schemas.js';
import { badRequest, notFound } from '../../shared/errors.js';
import { PUBLIC_ICONS_OWNER } from './images.js';
import type { App } from '../../http/route-app.js';
import type { Readable } from 'node:stream';
import type { AudioUploads } from './audio-uploads.js';
import type { FamilyService } from '../families/service.js';
import { jsonImageBodyLimit, readImageBody, readJsonImage } from './image-body.js';
import type { Images } from './images.js';
import type { MediaFiles, MediaResponse } from './media-files.js';
import {
  CoverAnswer,
  CoverQuery,
  DisplayIconAnswer,
  DisplayIconList,
  FamilyImageAnswer,
  FamilyImageList,
  FamilyImageListQuery,
  FamilyImageQuery,
  IconJsonAnswer,
  IconJsonUpload,
  IconUploadQuery,
  PublicIconQuery,
  FileParams,
  MediaIdParam,
  PutAnswer,
  SignedQuery,
  TranscodedAnswer,
  TranscodedQuery,
  UploadParams,
  UploadUrlAnswer,
  UploadUrlQuery,
} from './schemas.js';
import { Type } from '@sinclair/typebox';

const tags = ['media'];
const binaryErrors = { 400: ErrorRef, 403: ErrorRef, 404: ErrorRef, 413: ErrorRef };

/** Stored bytes, whole (200) or a range of them (206), as their own content type. */
const bytes = (description: string) => ({
  description,
  content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
});
const MEDIA_BYTES = {
  200: bytes('The bytes, with `Content-Type`, `Content-Length`, `ETag`, `Accept-Ranges` and `Cache-Control`'),
  206: bytes('The range asked for (`Range: bytes=...`), with `Content-Range`'),
  304: { description: 'Not modified: the `If-None-Match` tag is the stored one', type: 'null' },
};

function sendMedia(reply: FastifyReply, answer: MediaResponse): FastifyReply {
  reply.code(answer.status).headers(answer.headers);
  return answer.body ? reply.send(answer.body) : reply.send();
}

/**
 * The media routes (DECISIONS.md, "Media"). Bodies here are bytes, not JSON: in this plugin
 * every content type is handed to the handler as the request stream, which the services read
 * with their own size limits.
 */
export async function mediaRoutes(
  app: App,
  opts: { uploads: AudioUploads; files: MediaFiles; images: Images; families: FamilyService; maxImageBytes: number },
): Promise<void> {
  const { uploads, files, images, families, maxImageBytes } = opts;
  const imageOf = (req: { body: unknown; headers: Record<string, string | string[] | undefined> }) =>
    readImageBody(req.body as Readable | undefined, req.headers['content-type'] as string | undefined, maxImageBytes);
  const on = (flag: string | undefined) => flag !== 'false';
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

  app.get('/media/transcode/audio/uploadUrl', {
    config: { auth: SCOPES.contentManage },
    schema: {
      tags,
      summary: 'Get a URL to upload an audio file to',
      description:
        'Answers an upload id and a signed, single-use URL to `PUT` the bytes to. With the `sha256` of audio the caller uploaded before, `uploadUrl` is null and the upload id resolves at once; any other hash (one only other users stored included) gets an ordinary upload URL.',
      querystring: UploadUrlQuery,
      response: { 200: UploadUrlAnswer, ...authErrors, 413: ErrorRef },
    },
    handler: async (req) => ({ upload: await uploads.create(req.principal.userId, req.query) }),
  });

  app.put('/media/upload/:uploadId/file', {
    schema: {
      tags,
      summary: 'Upload the bytes of an audio file (the signed upload URL)',
      description:
        'No token: the URL is the permission. Refused: a wrong or expired signature or a used URL (403), bytes whose SHA-256 differs from the declared one, a body cut short, or bytes that are not audio (400), too large or over quota (413).',
      params: UploadParams,
      querystring: SignedQuery,
      response: { 200: PutAnswer, ...binaryErrors },
    },
    handler: async (req) => ({
      upload: await uploads.receive(req.params.uploadId, req.query, req.body as Readable),
    }),
  });

  app.get('/media/upload/:uploadId/transcoded', {
    config: { auth: SCOPES.contentManage, conditional: 'body' },
    schema: {
      tags,
      summary: 'Poll the transcode of an upload',
      description:
        'Until done: `progress`. Done: `transcodedSha256` (use it as `yoto:#<hash>` or `service:#<hash>` in a track) and `transcodedInfo`. A transcode that failed (unreadable, not an audio container, too long, over its time limit, over the quota of everyone who uploaded it) answers 400 with the reason; a transcode done that would put the caller over their quota, 413.',
      params: UploadParams,
      querystring: TranscodedQuery,
      response: { 200: TranscodedAnswer, ...authErrors, 404: ErrorRef, 413: ErrorRef },
    },
    handler: async (req) => ({
      transcode: await uploads.status(req.principal.userId, req.params.uploadId, isOn(req.query.loudnorm)),
    }),
  });

  app.route({
    method: ['GET', 'HEAD'],
    url: '/media/files/:hash',
    schema: {
      tags,
      summary: 'The bytes of stored media, by a signed URL',
      description:
        'The URLs that wishlists and `playable=true` card reads hand out. Ranges (206, 416), `HEAD`, `ETag` and `If-None-Match`. A wrong or expired signature: 403.',
      params: FileParams,
      querystring: SignedQuery,
      response: { ...MEDIA_BYTES, ...binaryErrors, 416: ErrorRef },
    },
    exposeHeadRoute: false,
    handler: async (req, reply) => {
      const params = req.params;
      return sendMedia(
        reply,
        await files.signed(params.hash, req.query, {
          method: req.method,
          range: req.headers.range,
          ifNoneMatch: req.headers['if-none-match'],
        }),
      );
    },
  });

  app.route({
    method: ['GET', 'HEAD'],
    url: '/media/public/:mediaId',
    schema: {
      tags,
      summary: 'A cover image or display icon',
      description: 'Public, as on the public service: the id is the SHA-256 of the image.',
      params: Type.Object({ mediaId: MediaIdParam }),
      response: { ...MEDIA_BYTES, 404: ErrorRef, 416: ErrorRef },
    },
    exposeHeadRoute: false,
    handler: async (req, reply) =>
      sendMedia(
        reply,
        await files.public((req.params).mediaId, {
          method: req.method,
          range: req.headers.range,
          ifNoneMatch: req.headers['if-none-match'],
        }),
      ),
  });

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

/**
 * `POST /icons`, the icon upload of yoto-js (`icons.upload(file, name)`), which sends the image
 * inside JSON. Its own plugin because `mediaRoutes` takes every body as bytes; the icon is made and
 * kept by the same service as `POST /media/displayIcons/user/me/upload` (validation, size limit,
 * storage), as that route does without query parameters (autoConvert on).
 */
export async function iconJsonRoutes(app: App, opts: { images: Images; maxImageBytes: number }): Promise<void> {
  const { images, maxImageBytes } = opts;

  app.post('/icons', {
    config: { auth: SCOPES.contentManage },
    bodyLimit: jsonImageBodyLimit(maxImageBytes),
    schema: {
      tags: ['media'],
      summary: 'Upload a display icon sent inside JSON (made a 16x16 PNG)',
      description:
        "`{\"file\", \"name\"}`: `file` is the image as a Buffer written by JSON (`{\"type\": \"Buffer\", \"data\": [bytes]}`) or base64; `name` titles the icon. The image is taken as `POST /media/displayIcons/user/me/upload` takes it (at most `MEDIA_MAX_IMAGE_BYTES`, resized to 16x16). Answers `id` (the `displayIconId`) and `url`, with the icon.",
      body: IconJsonUpload,
      response: { 200: IconJsonAnswer, ...authErrors, 413: ErrorRef },
    },
    handler: async (req) => {
      const bytes = readJsonImage(req.body.file, maxImageBytes);
      const displayIcon = await images.uploadIcon(req.principal.userId, bytes, { autoConvert: true, filename: req.body.name });
      return { id: displayIcon.displayIconId, url: displayIcon.url, displayIcon };
    },
  });
}
