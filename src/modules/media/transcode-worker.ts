import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Log } from '../../shared/log.js';
import type { TranscodeRow } from '../../db/database.js';
import type { Store } from '../../db/dialect.js';
import { asUnavailable } from '../../db/errors.js';
import type { MediaStore } from '../../media-store/media-store.js';
import { now } from '../../shared/clock.js';
import { RepeatFilter } from '../../shared/repeat-filter.js';
import type { MediaObjects } from './objects.js';
import { publishAll } from '../events/publish.js';
import * as repo from './repository.js';
import { OUTPUT_CONTENT_TYPE, TranscodeRefused, type AudioProbe, type TranscodedInfo, type Transcoder } from './transcoder.js';

/** A job whose worker stops renewing its lease (crash, kill) is taken over after this. */
const LEASE_MS = 60_000;
const RENEW_MS = 15_000;
/** Other instances' jobs, and lapsed leases, are looked for this often. */
const POLL_MS = 5_000;
/** A job that fails for reasons other than its input (disk, a killed process) is tried this often. */
export const MAX_ATTEMPTS = 3;

export interface TranscodeWorker {
  /** Looks for work now (after an upload arrives) instead of at the next poll. */
  kick(): void;
  /** Stops claiming jobs and stops the running ones; their leases lapse and they are retried. */
  close(): Promise<void>;
}

/** How long one job may take: a floor, plus a share of the audio's duration. */
export interface TranscodeLimits {
  /** Longest audio accepted, in seconds, checked from the probe before anything is decoded. */
  maxTrackSeconds: number;
  /** Every job may take this long, in seconds, whatever its duration. */
  timeLimitMinSeconds: number;
  /** ... plus this many percent of its duration (20: a minute of audio may take 12 s more). */
  timeLimitPercent: number;
}

/** The wall-clock limit of a job transcoding `probe`, in milliseconds. */
export function timeLimitMs(limits: TranscodeLimits, probe: Pick<AudioProbe, 'duration'>): number {
  const seconds = Math.min(probe.duration, limits.maxTrackSeconds);
  return Math.round((limits.timeLimitMinSeconds + (seconds * limits.timeLimitPercent) / 100) * 1000);
}

/** Refuses audio longer than the cap, before it is decoded. */
export function checkDuration(limits: TranscodeLimits, probe: Pick<AudioProbe, 'duration'>): void {
  if (probe.duration > limits.maxTrackSeconds) {
    throw new TranscodeRefused(
      `the audio lasts ${Math.round(probe.duration)} seconds; tracks may last at most ${limits.maxTrackSeconds} seconds`,
    );
  }
}

/**
 * Runs persisted transcode jobs, at most `concurrency` at once in this process. Jobs are claimed
 * from the database (see repository.claimTranscode), so any number of instances share the queue
 * and each job runs once; a job left running by a process that died is taken over when its
 * lease lapses. Users take turns (the claim picks the job of the user least served), and no job
 * outlives its time limit, so no upload can hold the queue.
 */
export function startTranscodeWorker(deps: {
  store: Store;
  mediaStore: MediaStore;
  objects: MediaObjects;
  transcoder: Transcoder;
  concurrency: number;
  limits: TranscodeLimits;
  workDir: string;
  log: Log;
}): TranscodeWorker {
  const { store, mediaStore, objects, transcoder, concurrency, limits, workDir, log } = deps;
  const running = new Set<Promise<void>>();
  const abort = new AbortController();
  let closed = false;
  const databaseFailures = new RepeatFilter(10_000);
  let filling: Promise<void> | undefined;
  let again = false;

  /** Puts a claimed job back in the queue (this instance is stopping). */
  const release = (job: TranscodeRow): Promise<unknown> =>
    repo.updateClaimedTranscode(store.db, job, { status: 'queued', lease_until: null, updated_at: now() }).catch(() => {});

  function fill(): Promise<void> {
    if (filling) {
      again = true;
      return filling;
    }
    filling = claimWhileRoom().finally(() => {
      filling = undefined;
    });
    return filling;
  }

  async function claimWhileRoom(): Promise<void> {
    try {
      do {
        again = false;
        while (!closed && running.size < concurrency) {
          const at = Date.now();
          const job = await repo.claimTranscode(
            store.db,
            store.dialect,
            new Date(at).toISOString(),
            new Date(at + LEASE_MS).toISOString(),
          );
          if (!job) break;
          if (closed) {
            await release(job); // claimed while the instance began to stop
            break;
          }
          const task = runJob(job).finally(() => {
            running.delete(task);
            if (!closed) kick();
          });
          running.add(task);
        }
      } while (again && !closed);
    } catch (err) {
      if (closed) return;
      const failure = asUnavailable(err);
      // The database being away is no bug of the queue: one line per kind and window, as the
      // request log does (src/http/error-handler.ts), not one stack per poll.
      if (!failure) log.error({ err }, 'transcode queue: claiming a job failed');
      else if (databaseFailures.admit(`${failure.reason} ${failure.detail}`) !== undefined) {
        log.warn({ reason: failure.reason, cause: failure.detail }, 'transcode queue: database unavailable');
      }
    }
  }

  function kick(): void {
    if (!closed) void fill();
  }

  async function runJob(job: TranscodeRow): Promise<void> {
    const label = { source: job.source_sha256, loudnorm: job.loudnorm === 1, attempt: job.attempts };
    const output = path.join(workDir, `${randomBytes(12).toString('hex')}.m4a`);
    let progress = 0;
    const renew = setInterval(() => {
      void repo
        .updateClaimedTranscode(store.db, job, {
          lease_until: new Date(Date.now() + LEASE_MS).toISOString(),
          progress,
          updated_at: now(),
        })
        .catch((err: unknown) => log.warn({ err, ...label }, 'transcode: renewing the lease failed'));
    }, RENEW_MS);
    renew.unref();
    let timedOut: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      await mkdir(workDir, { recursive: true });
      const input = await mediaStore.localPath(job.source_sha256);
      const probe = await transcoder.probe(input);
      checkDuration(limits, probe);
      // The job's own stop: at its time limit ffmpeg is killed and the job fails for good.
      const stop = new AbortController();
      const onShutdown = () => stop.abort();
      abort.signal.addEventListener('abort', onShutdown, { once: true });
      const limit = timeLimitMs(limits, probe);
      timer = setTimeout(() => {
        timedOut = limit;
        stop.abort();
      }, limit);
      let copied: boolean;
      try {
        ({ copied } = await transcoder.transcode(input, output, {
          loudnorm: job.loudnorm === 1,
          probe,
          maxSeconds: limits.maxTrackSeconds,
          signal: stop.signal,
          onProgress: (fraction) => {
            progress = Math.floor(fraction * 100);
          },
        }));
      } finally {
        clearTimeout(timer);
        abort.signal.removeEventListener('abort', onShutdown);
      }
      const staged = await mediaStore.stage(createReadStream(output), Number.MAX_SAFE_INTEGER);
      let info: TranscodedInfo;
      try {
        // Stored only if someone who uploaded the source may hold it within their quota.
        if (!(await objects.someoneHasRoom(await repo.uploaders(store.db, job.source_sha256), 'audio', staged.sha256, staged.size))) {
          throw new TranscodeRefused(`the transcode (${staged.size} bytes) would exceed your media quota`);
        }
        const result = await transcoder.probe(staged.path);
        info = {
          duration: Math.round(result.duration * 1000) / 1000,
          fileSize: staged.size,
          channels: result.channels,
          format: 'aac',
          sampleRate: result.sampleRate,
          // What the file holds, measured (about 128 for an encode, the source's own for a copy).
          bitrate: Math.round(result.bitrate / 1000),
          metadata: probe.tags,
        };
      } catch (err) {
        await staged.discard();
        throw err;
      }
      await objects.record(staged, OUTPUT_CONTENT_TYPE);
      await settle(job, 'transcode.finished', {
        status: 'done',
        progress: 100,
        transcoded_sha256: staged.sha256,
        transcoded_info: JSON.stringify(info),
        lease_until: null,
        updated_at: now(),
      });
      log.info({ ...label, transcoded: staged.sha256, copied }, 'transcode done');
    } catch (caught) {
      if (closed) {
        // Stopped on purpose (shutdown): back in the queue for the next instance or start.
        await release(job);
        return;
      }
      const err =
        timedOut !== undefined
          ? new TranscodeRefused(`transcoding took longer than its limit of ${Math.ceil(timedOut / 1000)} seconds and was stopped`)
          : caught;
      const final = err instanceof TranscodeRefused || job.attempts >= MAX_ATTEMPTS;
      const message =
        err instanceof TranscodeRefused
          ? err.message
          : `transcoding failed ${job.attempts} times; the last error: ${(err as Error).message}`;
      log.warn({ err, ...label, final }, 'transcode failed');
      const values = { status: final ? ('failed' as const) : ('queued' as const), error: final ? message : null, lease_until: null, updated_at: now() };
      await (final ? settle(job, 'transcode.failed', values) : repo.updateClaimedTranscode(store.db, job, values))
        .catch((e: unknown) => log.error({ err: e, ...label }, 'transcode: recording the failure failed'));
    } finally {
      clearTimeout(timer);
      clearInterval(renew);
      await rm(output, { force: true });
    }
  }

  /**
   * Records a transcode's end and, in the same transaction, tells each user who uploaded its
   * source (a live event to them alone, per upload: its poll has the answer now).
   */
  async function settle(job: TranscodeRow, kind: 'transcode.finished' | 'transcode.failed', values: Parameters<typeof repo.updateClaimedTranscode>[2]): Promise<void> {
    await store.db.transaction().execute(async (trx) => {
      if (!(await repo.updateClaimedTranscode(trx, job, values))) return;
      const uploads = await repo.uploadsOfSource(trx, job.source_sha256);
      await publishAll(
        trx,
        store.dialect,
        uploads.map(({ uploadId, userId }) => ({ kind, audience: { userId }, ids: { uploadId }, read: `/media/upload/${uploadId}/transcoded` })),
      );
    });
  }

  const poll = setInterval(kick, POLL_MS);
  poll.unref();
  kick();

  return {
    kick,
    async close() {
      closed = true;
      clearInterval(poll);
      abort.abort();
      await filling;
      await Promise.allSettled([...running]);
    },
  };
}
