import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import type { LinkJobRow } from '../../db/database.js';
import type { Store } from '../../db/dialect.js';
import { now } from '../../shared/clock.js';
import type { Log } from '../../shared/log.js';
import type { CopyContext, LocalSide } from './copy-context.js';
import { goneAtRemote, pullCard, remoteCardIds } from './pull.js';
import { pushCard } from './push.js';
import { createRemoteApi } from './remote-api.js';
import type { RemotePolicy } from './remote-http.js';
import { backgroundFailureLog } from './background-failures.js';
import * as repo from './repository.js';
import type { JobCard } from './schemas.js';
import { publishJobProgress, SignInLost, type LinkService } from './service.js';

/**
 * Runs pulls and pushes (issue 34, "Jobs that survive"). Jobs are rows: any instance claims one
 * (queued, or running under a lapsed lease: its instance died) and renews the lease while it
 * works, a few jobs an instance and a few files a job at once. Each card's outcome is written as
 * it ends, so a job taken over skips the cards done; a card half copied is copied again, which
 * makes nothing twice: media by hash, the local card through link_cards (written with the card),
 * the remote card through its Idempotency-Key. One card's failure is its own; the job goes on,
 * unless the link lost its sign-in (service.ts SignInLost): then the job fails.
 */
export interface JobRunner {
  /** A job was queued: look for work now. */
  kick(): void;
  /** Stops claiming; running jobs go back to the queue for another instance. */
  close(): Promise<void>;
}

export interface JobRunnerOptions {
  jobsPerInstance: number;
  filesPerJob: number;
  leaseSeconds: number;
  /** How often to look for work nobody kicked (another instance's job, a lapsed lease). */
  idleMs: number;
  mediaTimeoutMs: number;
  /** Claim this job only (the command line following the job it queued); absent: any job. */
  only?: string;
}

const CLOSE_WAIT_MS = 5000;

const FINAL = new Set(['copied', 'unchanged', 'conflict', 'deleted-remote', 'failed']);

class ClaimLost extends Error {}

export function startJobRunner(
  store: Store,
  deps: { links: LinkService; local: LocalSide; policyFor: (link: { api_base_url: string; auth_base_url: string }) => RemotePolicy; log: Log },
  opts: JobRunnerOptions,
): JobRunner {
  const { db } = store;
  const { links, local, log } = deps;
  const running = new Map<string, { stop: AbortController; done: Promise<void> }>();
  /** The claims this instance holds (job id to its claim token), for close. */
  const claims = new Map<string, { attempts: number }>();
  let closed = false;
  let looking = false;
  const failed = backgroundFailureLog(log, 'link jobs');

  const leaseUntil = (): string => new Date(Date.now() + opts.leaseSeconds * 1000).toISOString();

  async function look(): Promise<void> {
    if (looking || closed) return;
    looking = true;
    try {
      while (!closed && running.size < opts.jobsPerInstance) {
        const job = await repo.claimJob(db, store.dialect, now(), leaseUntil(), opts.only);
        if (!job) break;
        const stop = new AbortController();
        claims.set(job.job_id, { attempts: job.attempts });
        const done = run(job, stop.signal)
          .catch((err: unknown) => failed(err, { jobId: job.job_id }))
          .finally(() => {
            running.delete(job.job_id);
            claims.delete(job.job_id);
            kick();
          });
        running.set(job.job_id, { stop, done });
      }
    } catch (err) {
      failed(err);
    } finally {
      looking = false;
    }
  }

  function kick(): void {
    void look();
  }

  async function run(claimed: LinkJobRow, signal: AbortSignal): Promise<void> {
    const job = { ...claimed };
    const cards = JSON.parse(job.cards) as JobCard[];
    const request = JSON.parse(job.request) as { cardIds?: string[]; overwrite: boolean };
    let flushing: Promise<void> = Promise.resolve();

    /** Writes the job's progress (and its event) while the claim holds; the claim lost stops the job. */
    const flush = (final?: Pick<LinkJobRow, 'state' | 'error'>): Promise<void> => {
      flushing = flushing.then(async () => {
        const change = {
          cards: JSON.stringify(cards),
          files_done: job.files_done,
          files_total: job.files_total,
          bytes: job.bytes,
          lease_until: final ? null : leaseUntil(),
          updated_at: now(),
          ...(final ?? {}),
        };
        const held = await db.transaction().execute(async (trx) => {
          if (!(await repo.updateClaimedJob(trx, job.job_id, job.attempts, change))) return false;
          await publishJobProgress(trx, store, { ...job, ...change });
          return true;
        });
        if (!held) throw new ClaimLost();
      });
      return flushing;
    };
    // The lease is renewed with the progress, and at least three times a lease while a file runs.
    const renew = setInterval(() => {
      flush().catch(() => undefined);
    }, Math.max(1000, (opts.leaseSeconds * 1000) / 3));
    renew.unref();

    const limit = pLimit(opts.filesPerJob);
    try {
      const link = await links.linkRow(job.link_id);
      const ctx: CopyContext & { jobId: string } = {
        jobId: job.job_id,
        userId: job.user_id,
        linkId: job.link_id,
        overwrite: request.overwrite,
        remote: createRemoteApi({ link, policy: deps.policyFor(link), accessToken: (stale) => links.accessToken(link.link_id, stale), mediaTimeoutMs: opts.mediaTimeoutMs }),
        file: (work) => limit(work),
        addFiles: (count) => {
          job.files_total = Number(job.files_total) + count;
        },
        fileDone: (bytes) => {
          job.files_done = Number(job.files_done) + 1;
          job.bytes = Number(job.bytes) + bytes;
          void flush().catch(() => undefined);
        },
      };
      let ids = request.cardIds;
      if (job.kind === 'pull' && !ids) {
        const listed = await remoteCardIds(ctx);
        ids = listed.live;
        for (const gone of await goneAtRemote(ctx, local, new Set(listed.live))) {
          if (!cards.some((c) => c.remoteCardId === gone.remoteCardId)) cards.push(gone);
        }
      }
      for (const id of ids ?? []) {
        if (signal.aborted) throw new ClaimLost();
        const known = cards.findIndex((c) => (job.kind === 'pull' ? c.remoteCardId : c.cardId) === id);
        if (known >= 0 && FINAL.has(cards[known]!.state)) continue;
        const at = known >= 0 ? known : cards.push(job.kind === 'pull' ? { remoteCardId: id, cardId: null, state: 'pending' } : { remoteCardId: null, cardId: id, state: 'pending' }) - 1;
        await flush();
        let outcome: JobCard;
        try {
          outcome = job.kind === 'pull' ? await pullCard(ctx, local, id) : await pushCard(ctx, local, id);
        } catch (err) {
          if (err instanceof ClaimLost) throw err;
          outcome = { ...cards[at]!, state: 'failed', error: err instanceof Error ? err.message : String(err) };
          if (err instanceof SignInLost) {
            // Without a sign-in every card would fail alike: the job fails, with the reason.
            cards[at] = outcome;
            throw err;
          }
        }
        cards[at] = outcome;
        await flush();
      }
      await flush({ state: 'done', error: null });
    } catch (err) {
      if (signal.aborted) {
        // Shutting down: queued again for whichever instance looks next.
        await repo.requeueJob(db, job.job_id, job.attempts);
        return;
      }
      if (err instanceof ClaimLost) return;
      await flush({ state: 'failed', error: err instanceof Error ? err.message : String(err) }).catch(() => undefined);
    } finally {
      clearInterval(renew);
      await flushing.catch(() => undefined);
    }
  }

  const idle = setInterval(kick, opts.idleMs);
  idle.unref();
  kick();

  return {
    kick,
    async close() {
      closed = true;
      clearInterval(idle);
      for (const { stop } of running.values()) stop.abort();
      // A card stops at its next step; one that takes longer is left to lose its claim.
      await Promise.race([Promise.all([...running.values()].map((r) => r.done)), sleep(CLOSE_WAIT_MS)]);
      for (const [jobId, { attempts }] of claims) await repo.requeueJob(db, jobId, attempts);
    },
  };
}
