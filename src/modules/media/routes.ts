import { SCOPES } from '../../auth/scopes.js';
import { ErrorRef, authErrors } from '../../shared/schemas.js';
import type { App } from '../../http/route-app.js';
import type { AudioUploads } from './audio-uploads.js';
import { jsonImageBodyLimit, readJsonImage } from './image-body.js';
import type { Images } from './images.js';
import type { MediaFiles } from './media-files.js';
import { IconJsonAnswer, IconJsonUpload } from './schemas.js';
import { fileRoutes } from './routes/files.js';
import { imageRoutes, type ImageRouteOptions } from './routes/images.js';
import { uploadRoutes } from './routes/uploads.js';

/**
 * The media routes (DECISIONS.md, "Media"). Bodies here are bytes, not JSON: in this plugin
 * every content type is handed to the handler as the request stream, which the services read
 * with their own size limits.
 */
export async function mediaRoutes(
  app: App,
  opts: ImageRouteOptions & { uploads: AudioUploads; files: MediaFiles },
): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
  uploadRoutes(app, opts.uploads);
  fileRoutes(app, opts.files);
  imageRoutes(app, opts);
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
