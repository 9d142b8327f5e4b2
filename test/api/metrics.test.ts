import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { testDialect } from '../support/test-database.js';

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
    // inject's client address is 127.0.0.1.
    t = await startTestApp({ METRICS_ALLOW: '127.0.0.1' });
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

describe(`GET /metrics closed by default, and client addresses behind a proxy, on ${testDialect()}`, () => {
  let open: TestApp;
  let proxied: TestApp;
  beforeAll(async () => {
    open = await startTestApp();
    // A proxy on 127.0.0.1 in front; the metrics scraper in 10.0.0.0/8.
    proxied = await startTestApp({ TRUST_PROXY: '127.0.0.1', METRICS_ALLOW: '10.0.0.0/8', RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await open.close();
    await proxied.close();
  });

  it('answers 403 to everyone, loopback included, when neither METRICS_TOKEN nor METRICS_ALLOW is set', async () => {
    const r = await open.call('GET', '/metrics');
    expect(r.status).toBe(403);
    expect(errorCode(r)).toBe('forbidden');
    expect(r.raw.body).not.toContain('cardshelf_http_requests_total');
  });

  it('sends no CORS headers on /metrics, while the API keeps them', async () => {
    const headers = { origin: 'https://elsewhere.example' };
    const metrics = await proxied.call('GET', '/metrics', { headers: { ...headers, 'x-forwarded-for': '10.1.2.3' } });
    expect(metrics.status).toBe(200);
    expect(metrics.headers['access-control-allow-origin']).toBeUndefined();
    // (A preflight is answered by the catch-all OPTIONS route alike for every path; without
    // Access-Control-Allow-Origin on the GET itself, a browser still lets no page read it.)
    expect((await open.call('GET', '/healthz', { headers })).headers['access-control-allow-origin']).toBe('*');
  });

  it('takes the client address from X-Forwarded-For of a trusted proxy (TRUST_PROXY), and only of one', async () => {
    const from = (remoteAddress: string, forwardedFor?: string) =>
      proxied.app.inject({
        method: 'GET',
        url: '/metrics',
        remoteAddress,
        headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
      });
    expect((await from('127.0.0.1', '10.1.2.3')).statusCode).toBe(200);
    expect((await from('127.0.0.1', '192.168.7.7')).statusCode).toBe(403);
    // The proxy itself is not in METRICS_ALLOW.
    expect((await from('127.0.0.1')).statusCode).toBe(403);
    // A client that is not the proxy cannot name itself an allowed address.
    expect((await from('192.168.7.7', '10.1.2.3')).statusCode).toBe(403);
    // Without TRUST_PROXY the header is not believed.
    const direct = await open.app.inject({ method: 'GET', url: '/metrics', headers: { 'x-forwarded-for': '10.1.2.3' } });
    expect(direct.statusCode).toBe(403);
  });

  it('rate-limits each client behind the proxy on its own address, not the proxy\'s', async () => {
    const get = (client: string) =>
      proxied.app.inject({ method: 'GET', url: '/healthz', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': client } });
    for (let i = 0; i < 3; i++) expect((await get('203.0.113.1')).statusCode).toBe(200);
    expect((await get('203.0.113.1')).statusCode).toBe(429);
    // Another client through the same proxy has its own budget.
    expect((await get('203.0.113.2')).statusCode).toBe(200);
  });
});

describe('TRUST_PROXY is checked at start', () => {
  it('refuses what is neither true nor addresses and ranges', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(() => loadConfig({ DATA_DIR: '/tmp/x', TRUST_PROXY: 'the proxy' })).toThrow(/TRUST_PROXY/);
    expect(loadConfig({ DATA_DIR: '/tmp/x', TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy).toEqual(['10.0.0.0/8', '::1']);
    expect(loadConfig({ DATA_DIR: '/tmp/x', TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ DATA_DIR: '/tmp/x' }).trustProxy).toBe(false);
  });
});
