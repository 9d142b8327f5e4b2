/**
 * Lock waits on PostgreSQL while a write scenario runs: `pg_locks` sampled every 200 ms, each
 * sample counting the lock requests not granted in the server's database (advisory and row
 * locks alike). A write that waits for another family's write shows here; the measure
 * of writes that scale out (docs/scaling.md).
 */
import pg from 'pg';

export interface LockWaits {
  samples: number;
  /** Samples in which some lock request was waiting. */
  samplesWaiting: number;
  /** The most requests waiting in one sample. */
  mostWaiting: number;
}

const EVERY_MS = 200;

/** Starts sampling; `stop` ends it and gives the counts. */
export async function sampleLockWaits(databaseUrl: string): Promise<{ stop(): Promise<LockWaits> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const waits: LockWaits = { samples: 0, samplesWaiting: 0, mostWaiting: 0 };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await client.query<{ waiting: string }>(
        `select count(*) as waiting from pg_locks l
          where not l.granted and (l.database is null or l.database = (select oid from pg_database where datname = current_database()))`,
      );
      const waiting = Number(rows[0]?.waiting ?? 0);
      waits.samples++;
      if (waiting > 0) waits.samplesWaiting++;
      waits.mostWaiting = Math.max(waits.mostWaiting, waiting);
      await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await client.end();
      return waits;
    },
  };
}

export const lockWaitsText = (w: LockWaits): string =>
  `lock waits: ${w.samplesWaiting} of ${w.samples} pg_locks samples had a request waiting (at most ${w.mostWaiting})`;
