import type { Store } from '../db/dialect.js';
import * as repo from './throttle-repository.js';

/**
 * Throttles on what an attacker can repeat: failed sign-ins (per email and per client address),
 * wrong device codes entered at /activate and device-code requests (per address). Each counter
 * lets a few attempts through freely; past them, every further one locks the counter for a
 * doubling delay (2 s, 4 s, 8 s, ... up to 15 minutes), during which attempts are refused with
 * 429 and `Retry-After` and not counted. The counts live in the database, so every instance sees
 * every attempt; a counter left alone for its forgetting time starts again from nothing.
 *
 * An email is counted whether or not it has an account, so neither the delays nor the 429 tell
 * which emails are known.
 */
export const THROTTLE_RULES = {
  /** Failed sign-ins for one email, from anywhere but its known devices. */
  signInEmail: { free: 3, forgetAfterMs: 3_600_000 },
  /** Failed sign-ins for one email from one of its known devices (src/accounts/device-cookies.ts). */
  signInDevice: { free: 3, forgetAfterMs: 3_600_000 },
  /** Failed sign-ins from one address, for any email: a household shares one address. */
  signInAddress: { free: 20, forgetAfterMs: 3_600_000 },
  /** Wrong or expired codes entered at /activate from one address. */
  codeEntry: { free: 10, forgetAfterMs: 3_600_000 },
  /** Device-code requests from one address (each starts a sign-in that a person must finish). */
  deviceCode: { free: 10, forgetAfterMs: 600_000 },
  /** Accounts made (invitations accepted, `SIGNUP=open`) from one address. */
  signUp: { free: 5, forgetAfterMs: 3_600_000 },
} as const;

export const FIRST_DELAY_SECONDS = 2;
export const MAX_DELAY_SECONDS = 900;

export type ThrottleRule = keyof typeof THROTTLE_RULES;

/** One counter: a rule and what it counts (an email, an address). */
export interface Counter {
  rule: ThrottleRule;
  subject: string;
}

/** The lock after the `count`-th attempt, in seconds: none within the free ones, then doubling. */
export function delayAfter(count: number, free: number): number {
  if (count <= free) return 0;
  return Math.min(FIRST_DELAY_SECONDS * 2 ** (count - free - 1), MAX_DELAY_SECONDS);
}

export interface Throttle {
  /** Seconds until the counters allow another attempt; 0: allowed now. Counts nothing. */
  waitSeconds(counters: Counter[]): Promise<number>;
  /**
   * When the counters allow an attempt, counts it (before its outcome is known, so parallel
   * attempts cannot all slip in before the first failure is recorded) and answers 0; otherwise
   * answers the seconds to wait and counts nothing.
   */
  take(counters: Counter[]): Promise<number>;
  /** Counts one attempt, whatever the counters say (a failure seen after the fact). */
  count(counters: Counter[]): Promise<void>;
  /** An attempt counted by `take` succeeded: the counter starts again from nothing. */
  clear(counter: Counter): Promise<void>;
  /** An attempt counted by `take` succeeded, but the counter is shared: it is taken back. */
  uncount(counter: Counter): Promise<void>;
}

const keyOf = ({ rule, subject }: Counter): string => `${rule}:${rule === 'signInEmail' ? subject.trim().toLowerCase() : subject}`;

export function createThrottle(store: Store, now: () => number = Date.now): Throttle {
  const { db, dialect } = store;

  /** Reads (and, with `add`, counts) the counters in one transaction, holding each one's lock. */
  async function visit(counters: Counter[], add: 'always' | 'when-allowed'): Promise<number> {
    // Locks are taken in one order, so two visits of the same counters cannot wait on each other.
    const keyed = counters.map((c) => ({ key: keyOf(c), rule: THROTTLE_RULES[c.rule] })).sort((a, b) => (a.key < b.key ? -1 : 1));
    return db.transaction().execute(async (trx) => {
      for (const { key } of keyed) await dialect.lockKey(trx, `throttle:${key}`);
      const at = now();
      const rows = await repo.findCounters(trx, keyed.map((k) => k.key));
      const byKey = new Map(rows.map((r) => [r.key, r]));
      const until = Math.max(0, ...rows.map((r) => Date.parse(r.locked_until)));
      const wait = Math.max(0, Math.ceil((until - at) / 1000));
      if (wait > 0 && add === 'when-allowed') return wait;
      for (const { key, rule } of keyed) {
        const row = byKey.get(key);
        const fresh = row && at - Date.parse(row.last_attempt_at) <= rule.forgetAfterMs;
        const attempts = fresh ? row.attempts + 1 : 1;
        const fields = {
          attempts,
          last_attempt_at: new Date(at).toISOString(),
          locked_until: new Date(at + delayAfter(attempts, rule.free) * 1000).toISOString(),
        };
        if (row) await repo.updateCounter(trx, key, fields);
        else await repo.insertCounter(trx, { key, ...fields });
      }
      return 0;
    });
  }

  return {
    async waitSeconds(counters) {
      const rows = await repo.lockedUntilOf(db, counters.map(keyOf));
      const until = Math.max(0, ...rows.map((r) => Date.parse(r.locked_until)));
      return Math.max(0, Math.ceil((until - now()) / 1000));
    },
    take: (counters) => visit(counters, 'when-allowed'),
    async count(counters) {
      await visit(counters, 'always');
    },
    async clear(counter) {
      await repo.deleteCounter(db, keyOf(counter));
    },
    async uncount(counter) {
      const key = keyOf(counter);
      const { free } = THROTTLE_RULES[counter.rule];
      await db.transaction().execute(async (trx) => {
        await dialect.lockKey(trx, `throttle:${key}`);
        const row = await repo.findCounter(trx, key);
        if (!row) return;
        const attempts = Math.max(0, row.attempts - 1);
        const locked_until = new Date(Date.parse(row.last_attempt_at) + delayAfter(attempts, free) * 1000).toISOString();
        await repo.updateCounter(trx, key, { attempts, locked_until });
      });
    },
  };
}

/** Removes counters nobody added to for longer than any rule remembers. */
export async function sweepThrottle(store: Store, now = Date.now()): Promise<number> {
  const longest = Math.max(...Object.values(THROTTLE_RULES).map((r) => r.forgetAfterMs));
  return repo.deleteCountersIdleSince(store.db, new Date(now - longest).toISOString());
}
