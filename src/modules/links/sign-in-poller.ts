import type { LinkRow } from '../../db/database.js';
import type { Store } from '../../db/dialect.js';
import { now } from '../../shared/clock.js';
import type { Log } from '../../shared/log.js';
import { pollDeviceFlow, type PollOutcome } from './device-sign-in.js';
import type { RemotePolicy } from './remote-http.js';
import { backgroundFailureLog } from './background-failures.js';
import * as repo from './repository.js';
import { SLOW_DOWN_SECONDS } from './rules.js';
import type { SecretBox } from './secret-box.js';
import { publishLinkChanged, targetOf } from './service.js';

/**
 * Polls the remote's token endpoint for every link signing in, on every instance, as RFC 8628
 * 3.4-3.5 says: no sooner than the interval, 5 seconds more after `slow_down`, until the member
 * approved (the link is `linked`, its tokens sealed), denied or the code expired (`failed`, with
 * the reason). An instance claims each poll by moving `next_poll_at` (repository.claimPoll), so
 * a code is polled once per interval however many instances run.
 */
export interface SignInPoller {
  /** Polls what is due now (the ticker calls it; tests call it to skip the wait). */
  pollDue(): Promise<void>;
  close(): void;
}

const TICK_MS = 1000;
const POLLS_A_TICK = 20;

export function startSignInPoller(store: Store, deps: { box: SecretBox; policyFor: (link: LinkRow) => RemotePolicy; log: Log; tickMs?: number }): SignInPoller {
  const { db } = store;
  const { box, policyFor, log } = deps;
  let running: Promise<void> | undefined;
  const failed = backgroundFailureLog(log, 'link sign-in polls');

  const later = (seconds: number): string => new Date(Date.now() + seconds * 1000).toISOString();

  async function settle(link: LinkRow, change: Parameters<typeof repo.updateLinkIf>[3] & { state?: LinkRow['state'] }): Promise<void> {
    await db.transaction().execute(async (trx) => {
      if (await repo.updateLinkIf(trx, link.link_id, 'signing-in', change)) {
        await publishLinkChanged(trx, store, { ...link, state: change.state ?? link.state });
      }
    });
  }

  async function fail(link: LinkRow, reason: string): Promise<void> {
    await settle(link, { state: 'failed', reason, device_code_sealed: null, next_poll_at: null, updated_at: now() });
  }

  async function pollOne(link: LinkRow): Promise<void> {
    const seen = link.next_poll_at as string;
    if (link.expires_at && Date.parse(link.expires_at) <= Date.now()) return fail(link, 'the code expired before it was approved: link again');
    if (!(await repo.claimPoll(db, link.link_id, seen, later(link.poll_interval)))) return;
    const deviceCode = link.device_code_sealed ? box.open(link.device_code_sealed, link.link_id) : undefined;
    if (!deviceCode) return fail(link, 'the sign-in cannot be read (the instance secret changed): link again');
    let outcome: PollOutcome;
    try {
      outcome = await pollDeviceFlow(policyFor(link), targetOf(link), deviceCode);
    } catch (err) {
      // The remote is down or answered nonsense: try again at the next interval, until the code expires.
      log.warn({ linkId: link.link_id, err: err instanceof Error ? err.message : String(err) }, 'polling the remote sign-in failed');
      return;
    }
    switch (outcome.kind) {
      case 'pending':
        return;
      case 'slow-down': {
        const interval = link.poll_interval + SLOW_DOWN_SECONDS;
        await repo.updateLinkIf(db, link.link_id, 'signing-in', { poll_interval: interval, next_poll_at: later(interval), updated_at: now() });
        return;
      }
      case 'denied':
        return fail(link, 'the sign-in was denied at the remote');
      case 'expired':
        return fail(link, 'the code expired before it was approved: link again');
      case 'refused':
        return fail(link, outcome.reason);
      case 'tokens': {
        const { tokens } = outcome;
        if (!tokens.refreshToken) return fail(link, 'the remote gave no refresh token (offline_access): the link could not last');
        return settle(link, {
          state: 'linked',
          reason: null,
          user_code: null,
          verification_uri: null,
          verification_uri_complete: null,
          expires_at: null,
          device_code_sealed: null,
          next_poll_at: null,
          access_token_sealed: box.seal(tokens.accessToken, link.link_id),
          access_expires_at: later(tokens.expiresInSeconds),
          refresh_token_sealed: box.seal(tokens.refreshToken, link.link_id),
          updated_at: now(),
        });
      }
    }
  }

  async function pollDue(): Promise<void> {
    if (running) return running;
    running = (async () => {
      const due = await repo.duePolls(db, now(), POLLS_A_TICK);
      await Promise.all(
        due.map((link) => pollOne(link).catch((err: unknown) => failed(err, { linkId: link.link_id }))),
      );
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  const timer = setInterval(() => {
    pollDue().catch((err: unknown) => failed(err));
  }, deps.tickMs ?? TICK_MS);
  timer.unref();
  return {
    pollDue,
    close() {
      clearInterval(timer);
    },
  };
}
