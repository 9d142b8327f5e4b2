import type { FastifyReply } from 'fastify';
import { SCOPES } from '../../auth/scopes.js';
import { isOn } from '../../shared/query-flags.js';
import { ErrorRef, authErrors } from '../../shared/schemas.js';
import type { App } from '../../shared/http.js';
import type { AudioUploads } from './audio-uploads.js';
import type { MediaFiles, MediaResponse } from './media-files.js';
import {
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
const security = [{ bearer: [] }];
const binaryErrors = { 400: ErrorRef, 403: ErrorRef, 404: ErrorRef, 413: ErrorRef };

function sendMedia(reply: FastifyReply, answer: MediaResponse): FastifyReply {
  reply.code(answer.status).headers(answer.headers);
  return answer.body ? reply.send(answer.body) : reply.send();
}

/**
 * The media routes (DECISIONS.md, "Media"). Bodies here are bytes, not JSON: in this plugin
 * every content type is handed to the handler as the request stream, which the services read
 * with their own size limits.
 */
export async function mediaRoutes(app: App, opts: { uploads: AudioUploads; files: MediaFiles }): Promise<void> {
  const { uploads, files } = opts;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

  app.get('/media/transcode/audio/uploadUrl', {
    config: { auth: SCOPES.contentManage },
    schema: {
      tags,
      security,
      summary: 'Get a URL to upload an audio file to',
      description:
        'Answers an upload id and a signed, single-use URL to `PUT` the bytes to. With `sha256` of audio already stored, `uploadUrl` is null and the upload id resolves at once.',
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
      upload: await uploads.receive(req.params.uploadId, req.query, req.body as NodeJS.ReadableStream as never),
    }),
  });

  app.get('/media/upload/:uploadId/transcoded', {
    config: { auth: SCOPES.contentManage },
    schema: {
      tags,
      security,
      summary: 'Poll the transcode of an upload',
      description:
        'Until done: `progress`. Done: `transcodedSha256` (use it as `yoto:#<hash>` or `service:#<hash>` in a track) and `transcodedInfo`. A transcode that failed answers 400 with the reason.',
      params: UploadParams,
      querystring: TranscodedQuery,
      response: { 200: TranscodedAnswer, ...authErrors, 404: ErrorRef },
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
      response: { ...binaryErrors, 416: ErrorRef },
    },
    exposeHeadRoute: false,
    handler: async (req, reply) => {
      const params = req.params as { hash: string };
      return sendMedia(
        reply,
        await files.signed(params.hash, req.query as { expires?: string; signature?: string }, {
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
      response: { 404: ErrorRef, 416: ErrorRef },
    },
    exposeHeadRoute: false,
    handler: async (req, reply) =>
      sendMedia(
        reply,
        await files.public((req.params as { mediaId: string }).mediaId, {
          method: req.method,
          range: req.headers.range,
          ifNoneMatch: req.headers['if-none-match'],
        }),
      ),
  });
}
