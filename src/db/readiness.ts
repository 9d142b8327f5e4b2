import type { Store } from './dialect.js';
import { asUnavailable, DatabaseUnavailable } from './errors.js';

export type Readiness = { ready: true } | { ready: false; failure: DatabaseUnavailable };

/**
 * Whether the store can serve reads and writes now, answered within `timeoutMs` whatever the
 * database does. It writes one row: a database that reads but refuses writes (out of space,
 * read-only) is not ready, and the write path also finds a SQLite file that was moved or
 * deleted.
 */
export async function checkReadiness(store: Store, timeoutMs: number): Promise<Readiness> {
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
