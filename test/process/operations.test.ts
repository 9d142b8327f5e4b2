import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { http, startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe(`request ids and security headers on ${testDialect()}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    // An https public address: Strict-Transport-Security is sent only then (below).
    t = await startTestApp({ PUBLIC_BASE_URL: 'https://cardshelf.example' });
  });
  afterAll(() => t.close());

  it('gives every answer a new UUID as x-request-id, errors included', async () => {
    const a = await t.call('GET', '/healthz');
    const b = await t.call('GET', '/content/mine');
    expect(b.status).toBe(401);
    expect(a.headers['x-request-id']).toMatch(UUID);
    expect(b.headers['x-request-id']).toMatch(UUID);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  it("keeps a caller's well-formed x-request-id and replaces a malformed one", async () => {
    const kept = await t.call('GET', '/healthz', { headers: { 'x-request-id': 'trace-01HZX:abc.def_9' } });
    expect(kept.headers['x-request-id']).toBe('trace-01HZX:abc.def_9');
    for (const bad of ['has space', 'x'.repeat(129), 'a"b', '{"level":60}']) {
      const r = await t.call('GET', '/healthz', { headers: { 'x-request-id': bad } });
      expect(r.headers['x-request-id'], bad).toMatch(UUID);
    }
  });

  it('sends security headers on API answers and a policy that lets /docs load its own scripts and styles', async () => {
    const api = await t.call('GET', '/healthz');
    expect(api.headers['x-content-type-options']).toBe('nosniff');
    expect(api.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(api.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    const docs = await t.call('GET', '/docs/');
    expect(docs.status).toBe(200);
    const csp = String(docs.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self' https: 'unsafe-inline'");
    expect(csp).not.toContain('upgrade-insecure-requests');
    // Every script of the page comes from this origin; none is inline (the policy forbids those).
    const html = String(docs.body);
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, inline] of scripts) {
      expect(attrs).toMatch(/src="\.?\/?[^":]*"/);
      expect(inline!.trim()).toBe('');
    }
    const init = await t.call('GET', '/docs/static/swagger-initializer.js');
    expect(init.status).toBe(200);
  });

  it('sends them on errors, 304s and the live-event stream too', async () => {
    const secured = (headers: Record<string, unknown>, what: string) => {
      expect(headers['x-content-type-options'], what).toBe('nosniff');
      expect(headers['strict-transport-security'], what).toMatch(/max-age=\d+/);
      expect(String(headers['content-security-policy']), what).toContain("default-src 'self'");
      expect(headers['x-powered-by'], what).toBeUndefined();
    };
    secured((await t.call('GET', '/content/mine')).headers, '401');
    const token = await t.token('auth0|secured');
    const mine = await t.call('GET', '/content/mine', { token });
    expect(mine.status).toBe(200);
    const again = await t.call('GET', '/content/mine', { token, headers: { 'if-none-match': String(mine.headers.etag) } });
    expect(again.status).toBe(304);
    secured(again.headers, '304');
    secured((await t.call('GET', '/no/such/route', { token })).headers, '404');

    // The stream leaves Fastify for the raw response; the reply's headers go with it.
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const controller = new AbortController();
    const stream = await fetch(`http://127.0.0.1:${port}/user/family/events`, {
      headers: { authorization: `Bearer ${token}` },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    secured(Object.fromEntries(stream.headers), 'event stream');
    controller.abort();
  });
});

describe(`Strict-Transport-Security on ${testDialect()}`, () => {
  // Behind a proxy that ends TLS the connection is plain HTTP: the public address decides.
  it.each([
    ['https://cardshelf.example', true],
    ['http://cardshelf.example', false],
    ['http://localhost:8080', false],
  ])('with PUBLIC_BASE_URL=%s: sent %s, on the API, the web app, the sign-in pages and the engine', async (base, sent) => {
    const t = await startTestApp({ PUBLIC_BASE_URL: base });
    try {
      for (const url of ['/healthz', '/content/mine', '/app/', '/activate', '/.well-known/openid-configuration', '/no/such/route']) {
        const answer = await t.app.inject({ method: 'GET', url });
        expect(answer.headers['x-content-type-options'], url).toBe('nosniff');
        if (sent) expect(answer.headers['strict-transport-security'], url).toBe('max-age=31536000; includeSubDomains');
        else expect(answer.headers['strict-transport-security'], url).toBeUndefined();
      }
    } finally {
      await t.close();
    }
  });
});

describe(`load shedding on ${testDialect()}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    // Any heap is over this limit: the first sample (after a second) puts the app under pressure.
    t = await startTestApp({ LOAD_SHED_HEAP_USED_BYTES: '1024' });
  });
  afterAll(() => t.close());

  it('answers 503 unavailable with Retry-After in the error shape, while /healthz still answers', async () => {
    const token = await t.token('auth0|pressure');
    let r = await t.call('GET', '/content/mine', { token });
    for (let i = 0; r.status !== 503 && i < 100; i++) {
      await sleep(100);
      r = await t.call('GET', '/content/mine', { token });
    }
    expect(r.status).toBe(503);
    expect(errorCode(r)).toBe('unavailable');
    expect(r.headers['retry-after']).toBe('5');
    expect(r.headers['x-request-id']).toMatch(UUID);
    expect((await t.call('GET', '/healthz')).status).toBe(200);
  });
});

describe(`request ids in the logs on ${testDialect()}`, () => {
  let deployment: Deployment;
  let server: ServerProcess;
  beforeAll(async () => {
    deployment = await createDeployment();
    server = await startServer(deployment.env);
  });
  afterAll(async () => {
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
  });

  it('writes the request id on every log line of the request', async () => {
    const id = 'log-trace-7f3a';
    const res = await fetch(`${server.url}/content/mine`, { headers: { 'x-request-id': id } });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-request-id')).toBe(id);
    await res.text();
    let lines: Record<string, unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      lines = server
        .stdout()
        .split('\n')
        .filter((l) => l.includes('/content/mine'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      if (lines.some((l) => l.msg === 'request completed')) break;
      await sleep(100);
    }
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['request received', 'request completed']));
    for (const line of lines) expect(line.reqId).toBe(id);
    const other = await http(server.url, 'GET', '/healthz');
    expect(other.status).toBe(200);
  });

  it("never writes a signed URL's signature to the log", async () => {
    const hash = 'a'.repeat(64);
    const urls = [
      `/media/files/${hash}?expires=4102444800&signature=SIGNED-MEDIA-SECRET`,
      `/media/upload/some-upload/file?expires=4102444800&sig%6Eature=SIGNED-UPLOAD-SECRET`,
    ];
    for (const url of urls) {
      const res = await fetch(`${server.url}${url}`, { headers: { 'x-request-id': 'log-signature-check' } });
      await res.arrayBuffer();
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
    let lines: Record<string, unknown>[] = [];
    for (let i = 0; i < 50; i++) {
      lines = server
        .stdout()
        .split('\n')
        .filter((l) => l.includes('log-signature-check'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      if (lines.filter((l) => l.msg === 'request completed').length === 2) break;
      await sleep(100);
    }
    expect(lines.filter((l) => l.msg === 'request completed')).toHaveLength(2);
    expect(server.stdout()).not.toMatch(/SIGNED-(MEDIA|UPLOAD)-SECRET/);
    expect(lines.map((l) => l.url)).toEqual(
      expect.arrayContaining([
        `/media/files/${hash}?expires=4102444800&signature=REDACTED`,
        '/media/upload/some-upload/file?expires=4102444800&signature=REDACTED',
      ]),
    );
  });
});
