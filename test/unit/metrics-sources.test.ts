import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/dialect.js';
import { createMetrics } from '../../src/http/metrics.js';

const storeWithoutPool = { dialect: {} } as unknown as Store;

describe('metrics read from their sources at each scrape', () => {
  it('reports the transcode queue as the source counts it', async () => {
    let depth = { queued: 3, running: 1 };
    const { registry } = createMetrics(storeWithoutPool, { transcodeQueue: async () => depth });
    expect(await registry.getSingleMetricAsString('cardshelf_transcode_jobs')).toMatch(/status="queued"} 3\n.*status="running"} 1/s);
    depth = { queued: 0, running: 2 };
    expect(await registry.getSingleMetricAsString('cardshelf_transcode_jobs')).toMatch(/status="queued"} 0\n.*status="running"} 2/s);
  });

  it('leaves the gauge out of a scrape when the database does not answer, and the scrape still works', async () => {
    const { registry } = createMetrics(storeWithoutPool, {
      transcodeQueue: async () => {
        throw new Error('Connection terminated unexpectedly');
      },
    });
    const text = await registry.metrics();
    expect(text).toContain('process_cpu_seconds_total');
    expect(text).not.toMatch(/cardshelf_transcode_jobs\{/);
  });
});
