import path from 'node:path';
import type { Log } from '../../shared/log.js';
import type { Config } from '../../config.js';
import type { Store } from '../../db/dialect.js';
import type { MediaStore } from '../../media-store/media-store.js';
import { openMediaStore } from '../../media-store/open-media-store.js';
import { createMediaUrlSigner, type MediaUrlSigner } from './media-urls.js';
import { createAudioUploads, type AudioUploads } from './audio-uploads.js';
import { createMediaFiles, type MediaFiles } from './media-files.js';
import { createImages, type Images } from './images.js';
import { createMediaObjects } from './objects.js';
import { startTranscodeWorker } from './transcode-worker.js';
import { binaryVersion, createTranscoder, findBinaries, requireBinaries } from './transcoder.js';

export interface Media {
  uploads: AudioUploads;
  files: MediaFiles;
  images: Images;
  /** Signs the media URLs of answers (cards, wishlists) with the instance's secret. */
  signer: MediaUrlSigner;
  maxImageBytes: number;
  /** The bytes themselves, for what copies them whole (export). */
  mediaStore: MediaStore;
  /** Stops the transcode worker (running jobs go back to the queue). */
  close(): Promise<void>;
}

/**
 * The media module, wired from the configuration: store, services and the transcode worker.
 * `secret` is the instance's (src/auth/media-url-secret.ts `instanceSecret`): media and upload
 * URLs are signed and checked with it alone.
 */
export function createMedia(
  store: Store,
  config: Readonly<Config>,
  secret: string,
  log: Log,
): Media {
  const signer = createMediaUrlSigner(config.mediaUrlTemplate, secret);
  const mediaStore = openMediaStore(config.media);
  const objects = createMediaObjects(store, mediaStore, config.media.quotaBytes);
  const binaries = findBinaries(config.media);
  void logBinaries(binaries, log);
  const worker = startTranscodeWorker({
    store,
    mediaStore,
    objects,
    transcoder: createTranscoder(binaries, { copyCompatible: config.media.copyCompatibleAudio }),
    concurrency: config.media.transcodeConcurrency,
    limits: config.media.transcodeLimits,
    workDir: path.join(config.media.dir, 'work'),
    log: log.child({ component: 'transcode' }),
  });
  const uploads = createAudioUploads({
    store,
    mediaStore,
    objects,
    publicBaseUrl: config.publicBaseUrl,
    secret,
    urlTtlSeconds: config.media.uploadUrlTtlSeconds,
    maxBytes: config.media.maxAudioBytes,
    quotaBytes: config.media.quotaBytes,
    onQueued: () => worker.kick(),
  });
  return {
    uploads,
    signer,
    files: createMediaFiles(store, mediaStore, signer),
    images: createImages({ store, mediaStore, objects, signer, publicBaseUrl: config.publicBaseUrl }),
    maxImageBytes: config.media.maxImageBytes,
    mediaStore,
    close: () => worker.close(),
  };
}

/**
 * Says at start which ffmpeg transcodes, and loudly when there is none (or it does not run):
 * the server still serves everything else, and each transcode fails with that reason.
 */
async function logBinaries(found: ReturnType<typeof findBinaries>, log: Log): Promise<void> {
  try {
    const { ffmpeg, ffprobe } = requireBinaries(found);
    log.info({ ffmpeg, ffprobe, version: await binaryVersion(ffmpeg) }, 'transcoding with this ffmpeg');
  } catch (err) {
    log.error({ err }, 'TRANSCODING IS OFF: every audio upload will fail its transcode');
  }
}
