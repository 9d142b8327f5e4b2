import type { MediaConfig } from '../config.js';
import { createFsMediaStore } from './fs-media-store.js';
import type { MediaStore } from './media-store.js';
import { createS3MediaStore } from './s3-media-store.js';

/** The configured media store: S3-compatible when MEDIA_S3_BUCKET is set, else DATA_DIR/media. */
export function openMediaStore(media: MediaConfig): MediaStore {
  return media.s3 ? createS3MediaStore(media.s3, media.dir) : createFsMediaStore(media.dir);
}
