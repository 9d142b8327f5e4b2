import type { Store } from '../../db/dialect.js';
import type { CardService } from '../cards/service.js';
import type { AudioUploads } from '../media/audio-uploads.js';
import type { Images } from '../media/images.js';
import type { MediaStore } from '../../media-store/media-store.js';
import type { RemoteApi } from './remote-api.js';

/** What a pull or a push works with: the two sides, and the job's progress. */
export interface CopyContext {
  userId: string;
  linkId: string;
  remote: RemoteApi;
  /** Copy cards changed on both sides too (DECISIONS.md "Linked services"). */
  overwrite: boolean;
  /** Runs one file's copy when a slot of the job's few is free. */
  file<T>(work: () => Promise<T>): Promise<T>;
  /** Files found to copy (the job's `files.total` grows as cards are read). */
  addFiles(count: number): void;
  /** A file copied (or found there already), with the bytes that crossed. */
  fileDone(bytes: number): void;
}

/** This side's services a copy uses, as an app of this instance would. */
export interface LocalSide {
  store: Store;
  cards: CardService;
  uploads: AudioUploads;
  images: Images;
  mediaStore: MediaStore;
  publicBaseUrl: string;
  maxAudioBytes: number;
  maxImageBytes: number;
  /** The largest card accepted here (BODY_LIMIT): a remote's card is held to it too. */
  maxCardBytes: number;
  /** How long a transcode may take before the card fails (pulled audio is transcoded here). */
  transcodeWaitMs: number;
}
