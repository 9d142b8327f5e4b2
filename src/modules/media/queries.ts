import type { Db } from '../../db/unit-of-work.js';

/** Queries of this module that other parts of the app build on (the metrics). */

/** How many transcode jobs wait and run now, across every instance (the queue is the table). */
export async function transcodeQueueDepth(db: Db): Promise<{ queued: number; running: number }> {
  const rows = await db
    .selectFrom('transcodes')
    .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('status', 'in', ['queued', 'running'])
    .groupBy('status')
    .execute();
  const depth = { queued: 0, running: 0 };
  for (const row of rows) depth[row.status as 'queued' | 'running'] = Number(row.n);
  return depth;
}
