import type { FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { App } from '../../../http/route-app.js';
import { ErrorRef } from '../../../shared/schemas.js';
import type { MediaFiles, MediaResponse } from '../media-files.js';
import { FileParams, MediaIdParam, SignedQuery, binaryErrors } from '../schemas.js';

const tags = ['media'];

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

/** Stored media served: by a signed URL, and the public images by their id. */
export function fileRoutes(app: App, files: MediaFiles): void {
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
}
