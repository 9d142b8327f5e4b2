import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Readable } from 'node:stream';
import { fileTypeFromFile } from 'file-type';
import type { Store } from '../../db/dialect.js';
import type { TranscodeRow } from '../../db/database.js';
import { ObjectTooLarge, type MediaStore } from '../../media-store/media-store.js';
import { now } from '../../shared/clock.js';
import { AppError, badRequest, notFound } from '../../shared/errors.js';
import type { MediaObjects } from './objects.js';
import * as repo from './repository.js';
import type { TranscodedInfo } from './transcoder.js';

/**
 * Audio uploads (DECISIONS.md, "Media"): an upload id and a signed, single-use, expiring URL to
 * PUT the bytes to; the bytes are checked (size, declared SHA-256, that they are audio), kept,
 * and queued for transcoding; the upload id then answers the transcode's progress and result.
 */
export interface AudioUploads {
  create(userId: string, opts: { sha256?: string; filename?: string }): Promise<{ uploadId: string; uploadUrl: string | null }>;
  /** The PUT to an upload URL. */
  receive(uploadId: string, query: { expires?: string; signature?: string }, body: Readable): Promise<{ uploadId: string; sha256: string; size: number }>;
  status(userId: string, uploadId: string, loudnorm: boolean): Promise<TranscodeStatus>;
}

export type TranscodeStatus =
  | { uploadId: string; transcodedSha256: string; transcodedInfo: TranscodedInfo; transcodedAt: string }
  | { uploadId: string; progress: { phase: 'awaiting-upload' | 'queued' | 'transcoding'; percent: number } };

/** What a PUT may carry: audio, or a video container whose audio track is used. */
const ACCEPTED_VIDEO = new Set(['video/mp4', 'video/quicktime', 'video/webm', 'video/x-matroska', 'video/3gpp', 'video/ogg']);

export function isAudioType(mime: string): boolean {
  return mime.startsWith('audio/') || ACCEPTED_VIDEO.has(mime) || mime === 'application/ogg';
}

export function createAudioUploads(deps: {
  store: Store;
  mediaStore: MediaStore;
  objects: MediaObjects;
  publicBaseUrl: string;
  /** The instance's secret (src/auth/media-url-secret.ts), as media URLs'. */
  secret: string;
  urlTtlSeconds: number;
  maxBytes: number;
  quotaBytes: number;
  /** Called when a transcode was queued, so that a worker starts on it. */
  onQueued: () => void;
}): AudioUploads {
  const { store, mediaStore, objects, publicBaseUrl, urlTtlSeconds, maxBytes, quotaBytes, onQueued } = deps;
  const { db } = store;
  const mac = (uploadId: string, expires: string): Buffer =>
    createHmac('sha256', deps.secret).update(`upload:${uploadId}:${expires}`).digest();

  function uploadUrl(uploadId: string, expiresAtMs: number): string {
    const expires = String(Math.floor(expiresAtMs / 1000));
    const signature = mac(uploadId, expires).toString('base64url');
    return `${publicBaseUrl}/media/upload/${uploadId}/file?expires=${expires}&signature=${signature}`;
  }

  function checkSignature(uploadId: string, expires: string | undefined, signature: string | undefined): void {
    if (!expires || !signature || !/^\d{1,12}$/.test(expires)) {
      throw new AppError('forbidden', 'this upload URL is not signed: ask for a new one');
    }
    const given = Buffer.from(signature, 'base64url');
    const wanted = mac(uploadId, expires);
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
      throw new AppError('forbidden', 'the signature of this upload URL does not match');
    }
    if (Number(expires) * 1000 <= Date.now()) throw new AppError('forbidden', 'this upload URL has expired: ask for a new one');
  }

  /** Queues a transcode; `again`: one that failed before is tried again (its source arrived anew). */
  async function queue(sourceSha256: string, loudnorm: boolean, again = false): Promise<void> {
    await repo.queueTranscode(db, sourceSha256, loudnorm, now(), again);
    onQueued();
  }

  function answer(uploadId: string, job: TranscodeRow): TranscodeStatus {
    switch (job.status) {
      case 'done':
        return {
          uploadId,
          transcodedSha256: job.transcoded_sha256 as string,
          transcodedInfo: JSON.parse(job.transcoded_info as string) as TranscodedInfo,
          transcodedAt: job.updated_at,
        };
      case 'failed':
        throw badRequest(`transcoding failed: ${job.error ?? 'unknown error'}`);
      default:
        return { uploadId, progress: { phase: job.status === 'queued' ? 'queued' : 'transcoding', percent: job.progress } };
    }
  }

  return {
    async create(userId, opts) {
      const sha256 = opts.sha256?.toLowerCase();
      const uploadId = randomBytes(32).toString('base64url');
      const at = now();
      const expiresAtMs = Date.now() + urlTtlSeconds * 1000;
      const row = {
        upload_id: uploadId,
        user_id: userId,
        filename: opts.filename ?? null,
        declared_sha256: sha256 ?? null,
        state: 'awaiting' as const,
        source_sha256: null,
        url_expires_at: new Date(expiresAtMs).toISOString(),
        created_at: at,
        updated_at: at,
      };
      // Audio the caller uploaded before: nothing to upload, the id resolves at once. Audio only
      // others hold gets an ordinary upload URL, as an unknown hash does: the answer must not
      // tell whether anyone stored a file, and its transcode is the caller's only once the
      // caller's own bytes arrived and matched the hash.
      if (sha256 && (await repo.holds(db, userId, sha256, 'audio-source')) && (await mediaStore.stat(sha256))) {
        await repo.insertUpload(db, { ...row, state: 'received', source_sha256: sha256 });
        await queue(sha256, false);
        return { uploadId, uploadUrl: null };
      }
      await repo.insertUpload(db, row);
      return { uploadId, uploadUrl: uploadUrl(uploadId, expiresAtMs) };
    },

    async receive(uploadId, query, body) {
      checkSignature(uploadId, query.expires, query.signature);
      const upload = await repo.findUpload(db, uploadId);
      if (!upload) throw notFound(`upload ${uploadId}`);
      // Single use: one PUT at a time may hold the upload, and none after one succeeded.
      if (!(await repo.moveUpload(db, uploadId, 'awaiting', 'receiving', now()))) {
        throw new AppError('forbidden', 'this upload URL has already been used: ask for a new one');
      }
      let done = false;
      try {
        // The body stops at the quota while it streams, not once it is written whole. (Bytes the
        // user holds already do not count again: that exception is checked by objects.keep.)
        const ownsDeclared = upload.declared_sha256 !== null && (await repo.holds(db, upload.user_id, upload.declared_sha256, 'audio-source'));
        const room = ownsDeclared ? maxBytes : await objects.room(upload.user_id);
        let staged;
        try {
          staged = await mediaStore.stage(body, Math.min(maxBytes, room));
        } catch (err) {
          if (err instanceof ObjectTooLarge) {
            throw new AppError(
              'payload-too-large',
              room < maxBytes
                ? `this upload would exceed your media quota (${room} bytes left of ${quotaBytes})`
                : `audio uploads are limited to ${maxBytes} bytes`,
            );
          }
          throw badRequest('the upload ended before its body was complete');
        }
        try {
          if (staged.size === 0) throw badRequest('the upload is empty');
          if (upload.declared_sha256 && upload.declared_sha256 !== staged.sha256) {
            throw badRequest(
              `the uploaded bytes have SHA-256 ${staged.sha256}, not the ${upload.declared_sha256} declared when the upload URL was asked for`,
            );
          }
          const type = await fileTypeFromFile(staged.path);
          if (!type || !isAudioType(type.mime)) {
            throw badRequest(`the upload is not audio (${type ? `it looks like ${type.mime}` : 'its type is not recognised'})`);
          }
          await objects.keep(upload.user_id, 'audio-source', staged, type.mime);
        } finally {
          await staged.discard();
        }
        await repo.moveUpload(db, uploadId, 'receiving', 'received', now(), staged.sha256);
        done = true;
        await queue(staged.sha256, false, true);
        return { uploadId, sha256: staged.sha256, size: staged.size };
      } finally {
        // A refused or broken-off PUT leaves the URL usable for another try until it expires.
        if (!done) await repo.moveUpload(db, uploadId, 'receiving', 'awaiting', now());
      }
    },

    async status(userId, uploadId, loudnorm) {
      const upload = await repo.findUpload(db, uploadId);
      if (!upload || upload.user_id !== userId) throw notFound(`upload ${uploadId}`);
      if (upload.state !== 'received' || !upload.source_sha256) {
        return { uploadId, progress: { phase: 'awaiting-upload', percent: 0 } };
      }
      let job = await repo.findTranscode(db, upload.source_sha256, loudnorm);
      if (!job) {
        // The normalised variant is made when first asked for.
        await queue(upload.source_sha256, loudnorm);
        job = await repo.findTranscode(db, upload.source_sha256, loudnorm);
      }
      const status = answer(uploadId, job as TranscodeRow);
      // The transcode counts against the poller's quota: over it, 413 (the poll's error shape).
      if ('transcodedSha256' in status) await objects.hold(userId, 'audio', status.transcodedSha256);
      return status;
    },
  };
}
