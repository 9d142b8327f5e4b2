import type { Readable } from 'node:stream';
import { SCOPES } from '../../../auth/scopes.js';
import type { App } from '../../../http/route-app.js';
import { isOn } from '../../../shared/query-flags.js';
import { ErrorRef, authErrors } from '../../../shared/schemas.js';
import type { AudioUploads } from '../audio-uploads.js';
import {
  PutAnswer,
  SignedQuery,
  TranscodedAnswer,
  TranscodedQuery,
  UploadParams,
  UploadUrlAnswer,
  UploadUrlQuery,
  binaryErrors,
} from '../schemas.js';

const tags = ['media'];

/** Audio uploads: a signed URL to upload to, the upload by it, and its transcode polled. */
export function uploadRoutes(app: App, uploads: AudioUploads): void {
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
}
