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
import * as repo from './repository.js';
import { OUTPUT_CONTENT_TYPE, UnreadableAudio, type TranscodedInfo, type Transcoder } from './transcoder.js';

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

/**
 * Runs persisted transcode jobs, at most `concurrency` at once in this process. Jobs are claimed
 * from the database (see repository.claimTranscode), so any number of instances share the queue
 * and each job runs once; a job left running by a process that died is taken over when its
 * lease lapses.
 */
export function startTranscodeWorker(deps: {
  store: Store;
  mediaStore: MediaStore;
  objects: MediaObjects;
  transcoder: Transcoder;
  concurrency: number;
  workDir: string;
  log: Log;
}): TranscodeWorker {
  const { store, mediaStore, objects, transcoder, concurrency, workDir, log } = deps;
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
    try {
      await mkdir(workDir, { recursive: true });
      const input = await mediaStore.localPath(job.source_sha256);
      const probe = await transcoder.probe(input);
      await transcoder.transcode(input, output, {
        loudnorm: job.loudnorm === 1,
        probe,
        signal: abort.signal,
        onProgress: (fraction) => {
          progress = Math.floor(fraction * 100);
        },
      });
      const staged = await mediaStore.stage(createReadStream(output), Number.MAX_SAFE_INTEGER);
      const result = await transcoder.probe(staged.path);
      const info: TranscodedInfo = {
        duration: Math.round(result.duration * 1000) / 1000,
        fileSize: staged.size,
        channels: result.channels,
        format: 'aac',
        sampleRate: result.sampleRate,
        bitrate: 128,
        metadata: probe.tags,
      };
      await objects.record(staged, OUTPUT_CONTENT_TYPE);
      await repo.updateClaimedTranscode(store.db, job, {
        status: 'done',
        progress: 100,
        transcoded_sha256: staged.sha256,
        transcoded_info: JSON.stringify(info),
        lease_until: null,
        updated_at: now(),
      });
      log.info({ ...label, transcoded: staged.sha256 }, 'transcode done');
    } catch (err) {
      if (closed) {
        // Stopped on purpose (shutdown): back in the queue for the next instance or start.
        await release(job);
        return;
      }
      const final = err instanceof UnreadableAudio || job.attempts >= MAX_ATTEMPTS;
      const message =
        err instanceof UnreadableAudio
          ? err.message
          : `transcoding failed ${job.attempts} times; the last error: ${(err as Error).message}`;
      log.warn({ err, ...label, final }, 'transcode failed');
      await repo
        .updateClaimedTranscode(store.db, job, {
          status: final ? 'failed' : 'queued',
          error: final ? message : null,
          lease_until: null,
          updated_at: now(),
        })
        .catch((e: unknown) => log.error({ err: e, ...label }, 'transcode: recording the failure failed'));
    } finally {
      clearInterval(renew);
      await rm(output, { force: true });
    }
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
