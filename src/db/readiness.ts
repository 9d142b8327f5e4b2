import type { Store } from './dialect.js';
import { asUnavailable, DatabaseUnavailable } from './errors.js';

export type Readiness = { ready: true } | { ready: false; failure: DatabaseUnavailable };

/** How long a probe write that succeeded answers for the checks after it. */
export const READINESS_REUSE_MS = 2_000;

/**
 * `checkReadiness` shared by every caller of `GET /readyz`, which anyone may call: at most one
 * probe write runs at a time (callers meanwhile wait for its answer), and one that succeeded
 * answers for READINESS_REUSE_MS, so a flood of probes writes about one row every two seconds.
 * A failure is not reused: the next call looks again, so recovery is seen at once.
 */
export function sharedReadinessCheck(store: Store, timeoutMs: number, reuseMs = READINESS_REUSE_MS): () => Promise<Readiness> {
  let inFlight: Promise<Readiness> | undefined;
  let readyUntil = 0;
  return () => {
    if (performance.now() < readyUntil) return Promise.resolve({ ready: true });
    inFlight ??= checkReadiness(store, timeoutMs).then((readiness) => {
      inFlight = undefined;
      if (readiness.ready) readyUntil = performance.now() + reuseMs;
      return readiness;
    }, (err: unknown) => {
      inFlight = undefined;
      throw err;
    });
    return inFlight;
  };
}

/**
 * Whether the store can serve reads and writes now, answered within `timeoutMs` whatever the
 * database does. It writes one row: a database that reads but refuses writes (out of space,
 * read-only) is not ready, and the write path also finds a SQLite file that was moved or
 * deleted.
 */
async function checkReadiness(store: Store, timeoutMs: number): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<Readiness>((resolve) => {
    timer = setTimeout(() => {
      const cause = new Error(`no answer within ${timeoutMs} ms`);
      resolve({ ready: false, failure: new DatabaseUnavailable('timeout', { cause }) });
    }, timeoutMs);
  });
  try {
    return await Promise.race([probe(store), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

async function probe(store: Store): Promise<Readiness> {
  const at = new Date().toISOString();
  try {
    // In a transaction: a pooled connection found dead at `begin` is replaced (guarded-driver.ts),
    // so a connection the server dropped a moment ago does not read as "not ready".
    await store.db.transaction().execute((trx) =>
      trx
        .insertInto('readiness_probe')
        .values({ id: 1, at })
        .onConflict((oc) => oc.column('id').doUpdateSet({ at }))
        .execute(),
    );
    return { ready: true };
  } catch (err) {
    const failure = asUnavailable(err);
    if (!failure) throw err;
    return { ready: false, failure };
  }
}
