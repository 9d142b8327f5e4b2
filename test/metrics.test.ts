import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, startTestApp, type TestApp } from './helpers.js';
import { testDialect } from './support/test-database.js';

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.indexOf('}'));
    const have = inside.split(',');
    if (wanted.every((w) => have.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe(`GET /metrics on ${testDialect()}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('counts requests and their latency by route pattern and status, never by raw URL', async () => {
    const token = await t.token('auth0|metrics');
    expect((await t.call('GET', '/wishlists/no-such-id-1', { token })).status).toBe(404);
    expect((await t.call('GET', '/wishlists/no-such-id-2', { token })).status).toBe(404);
    expect((await t.call('GET', '/no/such/path')).status).toBe(404);
    const r = await t.call('GET', '/metrics');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = r.raw.body;
    const route = { method: 'GET', route: '/wishlists/:wishlistId', status_code: '404' };
    expect(sample(text, 'cardshelf_http_requests_total', route)).toBe(2);
    expect(sample(text, 'cardshelf_http_request_duration_seconds_count', route)).toBe(2);
    expect(sample(text, 'cardshelf_http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(2);
    expect(sample(text, 'cardshelf_http_requests_total', { route: '(unmatched)', status_code: '404' })).toBe(1);
    expect(text).not.toContain('no-such-id');
    expect(text).not.toContain('/no/such/path');
  });

  it('times database queries and reports process metrics (and the pool on PostgreSQL)', async () => {
    const token = await t.token('auth0|metrics-db');
    expect((await t.call('POST', '/wishlists', { token, body: { content: [] } })).status).toBe(201);
    const text = (await t.call('GET', '/metrics')).raw.body;
    expect(sample(text, 'cardshelf_db_query_duration_seconds_count', { operation: 'insert' })).toBeGreaterThan(0);
    expect(sample(text, 'cardshelf_db_query_duration_seconds_count', { operation: 'select' })).toBeGreaterThan(0);
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    // The transcode queue is read from the database at each scrape: empty here.
    expect(sample(text, 'cardshelf_transcode_jobs', { status: 'queued' })).toBe(0);
    expect(sample(text, 'cardshelf_transcode_jobs', { status: 'running' })).toBe(0);
    if (testDialect() === 'postgres') {
      expect(sample(text, 'cardshelf_db_pool_connections', { state: 'max' })).toBe(10);
      expect(sample(text, 'cardshelf_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
    } else {
      expect(text).not.toContain('cardshelf_db_pool_connections');
    }
  });
});

describe(`GET /metrics restricted on ${testDialect()}`, () => {
  let t: TestApp;
  const METRICS_TOKEN = 'metrics-secret-0123456789';
  beforeAll(async () => {
    // inject's client address is 127.0.0.1.
    t = await startTestApp({ METRICS_TOKEN, METRICS_ALLOW: '10.0.0.0/8, 127.0.0.0/30' });
  });
  afterAll(() => t.close());

  it('needs the bearer token when one is configured', async () => {
    const none = await t.call('GET', '/metrics');
    expect(none.status).toBe(401);
    expect(errorCode(none)).toBe('unauthorized');
    expect((await t.call('GET', '/metrics', { token: 'metrics-secret-wrong' })).status).toBe(401);
    const ok = await t.call('GET', '/metrics', { token: METRICS_TOKEN });
    expect(ok.status).toBe(200);
    expect(ok.raw.body).toContain('cardshelf_http_requests_total');
  });

  it('refuses addresses outside the allowed ranges', async () => {
    const r = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress: '192.168.1.5',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(r.statusCode).toBe(403);
    const inside = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      remoteAddress: '10.20.30.40',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(inside.statusCode).toBe(200);
  });
});
