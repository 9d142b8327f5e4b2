import { createFsMediaStore } from './fs-media-store.js';
import type { MediaStore } from './media-store.js';
import { createS3MediaStore, type S3StoreConfig } from './s3-media-store.js';

/** Where media bytes live; the application's configuration builds it from the environment. */
export interface MediaStoreConfig {
  /** The embedded media store's directory (DATA_DIR/media); with S3, local staging and copies. */
  dir: string;
  /** An S3-compatible object store instead of `dir` (MEDIA_S3_BUCKET and its settings). */
  s3: S3StoreConfig | undefined;
}

/** The configured media store: S3-compatible when MEDIA_S3_BUCKET is set, else DATA_DIR/media. */
export function openMediaStore(media: MediaStoreConfig): MediaStore {
  return media.s3 ? createS3MediaStore(media.s3, media.dir) : createFsMediaStore(media.dir);
}
