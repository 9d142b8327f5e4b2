import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody, errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import { expectStatus, newUser } from '../support/fixtures.js';

let t: TestApp;
let token: string;
let sub: string;
beforeAll(async () => {
  t = await startTestApp();
  sub = newUser('errors');
  token = await t.token(sub, 'user:content:manage family:library:manage admin');
});
afterAll(() => t.close());

/** The documented error shape, exactly: `{"error": {"code", "message"}}` and nothing else. */
function expectError(r: Reply, status: number, code?: string): void {
  expect(r.status, r.raw.body.slice(0, 300)).toBe(status);
  expect(String(r.headers['content-type'])).toMatch(/^application\/json/);
  expect(Object.keys(r.body)).toEqual(['error']);
  expect(Object.keys(r.body.error).sort()).toEqual(['code', 'message']);
  expect(errorCode(r)).toMatch(/^[a-z]+(-[a-z]+)*$/);
  expect(r.body.error.message.length).toBeGreaterThan(0);
  if (code) expect(errorCode(r)).toBe(code);
}

/** A 4xx in the documented shape, never a 5xx. */
function expectClientError(r: Reply): void {
  expect(r.status, r.raw.body.slice(0, 300)).toBeGreaterThanOrEqual(400);
  expect(r.status, r.raw.body.slice(0, 300)).toBeLessThan(500);
  expectError(r, r.status);
}

async function cardCount(): Promise<number> {
  const r = expectStatus(await t.call('GET', '/content/mine?showdeleted=true', { token }), 200);
  return r.body.cards.length;
}

const json = { 'content-type': 'application/json' };

describe('request bodies', () => {
  it.each([
    ['a truncated document', '{"title":'],
    ['a trailing comma', '{"title":"x",}'],
    ['single quotes', "{'title':'x'}"],
    ['a bare word', 'title'],
    ['two documents', '{"title":"a"}{"title":"b"}'],
    ['an unterminated string', '{"title":"x'],
    ['NaN', '{"title":"x","n":NaN}'],
  ])('refuses malformed JSON (%s) with 400 bad-request', async (_label, rawBody) => {
    const before = await cardCount();
    expectError(await t.call('POST', '/content', { token, rawBody, headers: json }), 400, 'bad-request');
    expect(await cardCount()).toBe(before);
  });

  it.each(['', ' ', '\n\t '])('refuses an empty JSON body (%j) with 400 bad-request', async (rawBody) => {
    expectError(await t.call('POST', '/content', { token, rawBody, headers: json }), 400, 'bad-request');
  });

  it('takes a body-less DELETE sent with a JSON content type (generic clients send it on every call)', async () => {
    for (const headers of [json, { ...json, 'content-length': '0' }]) {
      const created = expectStatus(await t.call('POST', '/content', { token, body: cardBody('Delete me') }), 201);
      const id = created.body.card.cardId;
      const r = await t.call('DELETE', `/content/${id}`, { token, headers });
      expect(expectStatus(r, 200).body).toEqual({ status: 'ok' });
      const read = expectStatus(await t.call('GET', `/content/${id}`, { token }), 200);
      expect(read.body.card.deleted).toBe(true);
    }
    // A route that takes a body still refuses an empty one.
    expectError(await t.call('POST', '/content', { token, headers: { ...json, 'content-length': '0' } }), 400, 'bad-request');
  });

  it('still refuses malformed JSON on a body-less route', async () => {
    const created = expectStatus(await t.call('POST', '/content', { token, body: cardBody('Keep me') }), 201);
    const id = created.body.card.cardId;
    expectError(await t.call('DELETE', `/content/${id}`, { token, rawBody: '{"x":', headers: json }), 400, 'bad-request');
    expect(expectStatus(await t.call('GET', `/content/${id}`, { token }), 200).body.card.deleted).toBe(false);
  });

  it('refuses a JSON request without a body with 400', async () => {
    expectError(await t.call('POST', '/content', { token, headers: json }), 400, 'bad-request');
    expectError(await t.call('POST', '/content', { token }), 400, 'bad-request');
  });

  it.each([
    ['text/plain', '{"title":"x"}'],
    ['application/xml', '<card><title>x</title></card>'],
    ['text/xml', '<card/>'],
    ['application/x-www-form-urlencoded', 'title=x'],
    ['multipart/form-data; boundary=xyz', '--xyz\r\n\r\nx\r\n--xyz--'],
    ['application/octet-stream', 'binary'],
    ['text/html', '<p>x</p>'],
  ])('refuses the content type %s with 415 unsupported-media-type', async (type, rawBody) => {
    const before = await cardCount();
    const r = await t.call('POST', '/content', { token, rawBody, headers: { 'content-type': type } });
    expectError(r, 415, 'unsupported-media-type');
    expect(await cardCount()).toBe(before);
  });

  it.each(['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON'])(
    'accepts the JSON content type %j',
    async (type) => {
      const r = await t.call('POST', '/content', { token, rawBody: JSON.stringify(cardBody('Typed')), headers: { 'content-type': type } });
      expect(expectStatus(r, 201).body.card.title).toBe('Typed');
    },
  );

  it('refuses a body over the global limit with 413 payload-too-large, storing nothing', async () => {
    const before = await cardCount();
    const limit = t.config.bodyLimit;
    const body = { ...cardBody('Huge'), padding: 'x'.repeat(limit + 10) };
    const r = await t.call('POST', '/content', { token, body });
    expectError(r, 413, 'payload-too-large');
    expect(await cardCount()).toBe(before);
  });

  it('takes a body just under the global limit', async () => {
    const limit = t.config.bodyLimit;
    const base = JSON.stringify({ ...cardBody('Big'), padding: '' });
    const body = { ...cardBody('Big'), padding: 'x'.repeat(limit - Buffer.byteLength(base) - 10) };
    expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThanOrEqual(limit);
    const r = await t.call('POST', '/content', { token, body });
    expect(expectStatus(r, 201).body.card.padding.length).toBe(body.padding.length);
  });

  it.each([
    ['__proto__ at the top', '{"title":"x","__proto__":{"polluted":true}}'],
    ['__proto__ nested', '{"title":"x","metadata":{"__proto__":{"polluted":true}}}'],
    ['__proto__ in an array', '{"title":"x","list":[{"__proto__":{"polluted":true}}]}'],
    ['constructor.prototype', '{"title":"x","constructor":{"prototype":{"polluted":true}}}'],
  ])('refuses prototype poisoning (%s) with a 4xx, not a 500, and pollutes nothing', async (_label, rawBody) => {
    const before = await cardCount();
    const r = await t.call('POST', '/content', { token, rawBody, headers: json });
    expectClientError(r);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    expect(await cardCount()).toBe(before);
    // The app still works.
    expectStatus(await t.call('GET', '/healthz'), 200);
  });

  it('refuses a deeply nested body with a 4xx, not a 500', async () => {
    const depth = 5000;
    const rawBody = `{"title":"deep","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    expectClientError(await t.call('POST', '/content', { token, rawBody, headers: json }));
  });
});

describe('routing', () => {
  it.each([
    ['GET', '/nope'],
    ['POST', '/nowhere/at/all'],
    ['GET', '/admin'],
    ['GET', '/card/family/library/groups/x/y'],
    ['DELETE', '/'],
  ])('answers the unknown route %s %s with 404 not-found', async (method, url) => {
    expectError(await t.call(method, url, { token }), 404, 'not-found');
  });

  it('answers an unknown route the same way without a token', async () => {
    expectError(await t.call('GET', '/does/not/exist'), 404, 'not-found');
  });

  it.each([
    ['PATCH', '/content/mine', ['GET']],
    ['POST', '/content/mine', ['GET']],
    ['PUT', '/content', ['POST']],
    ['GET', '/content', ['POST']],
    ['DELETE', '/content', ['POST']],
    ['PATCH', '/content/abcde', ['GET', 'DELETE']],
    ['POST', '/user/family', ['GET']],
    ['DELETE', '/card/family/library', ['GET', 'POST']],
    ['PATCH', '/wishlists', ['GET', 'POST']],
    ['POST', '/wishlists/some-id', ['GET', 'PUT', 'DELETE']],
    ['GET', '/admin/cards/abcde', ['PUT']],
    ['POST', '/healthz', ['GET']],
    ['POST', '/docs/json', ['GET']],
    ['DELETE', '/docs', ['GET']],
  ])('answers %s %s with 405 and an Allow header', async (method, url, allowed) => {
    const r = await t.call(method, url, { token });
    expectError(r, 405);
    const allow = String(r.headers.allow ?? '')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean);
    for (const m of allowed) expect(allow).toContain(m);
    expect(allow).not.toContain(method);
  });

  it('answers 405 on a known path without a token too (it says nothing about any resource)', async () => {
    const r = await t.call('PATCH', '/content/mine');
    expect(r.status).toBe(405);
    expect(String(r.headers.allow)).toContain('GET');
  });

  const garbage = [
    'a'.repeat(101),
    'a'.repeat(129),
    'a'.repeat(5000),
    '%00',
    '%00abcd',
    '%FF%FE',
    '%E0%A4%A',
    '%',
    '%zz',
    '..%2F..%2Fetc%2Fpasswd',
    "'%3B%20DROP%20TABLE%20cards%3B--",
    '%F0%9F%92%A5',
    '%E2%80%AE',
    '$where',
    '[object Object]',
    '__proto__',
    'constructor',
  ];

  it.each(garbage)('does not fail on the path parameter %s', async (param) => {
    const shown = (r: Reply) => `${r.status} ${r.raw.body.slice(0, 200)}`;
    for (const [method, url, body] of [
      ['GET', `/content/${param}`],
      ['GET', `/card/${param}`],
      ['DELETE', `/content/${param}`],
      ['PUT', `/admin/cards/${param}`, cardBody()],
      ['GET', `/card/family/library/groups/${param}`],
      ['PUT', `/wishlists/${param}`, { content: [] }],
      ['GET', `/wishlists/shared/${param}`],
    ] as [string, string, unknown?][]) {
      const r = await t.call(method, url, { token, body });
      expect(r.status, `${method} ${url.slice(0, 60)}: ${shown(r)}`).toBeGreaterThanOrEqual(400);
      expect(r.status, `${method} ${url.slice(0, 60)}: ${shown(r)}`).toBeLessThan(500);
      expectError(r, r.status);
    }
    // Nothing of the caller's was deleted or created on the way.
    expectStatus(await t.call('GET', '/healthz'), 200);
  });

  it.each(['showdeleted=%', 'showdeleted[]=true', 'showdeleted[a]=1', '%00=%00', 'a'.repeat(10000) + '=1'])(
    'does not fail on the query %s',
    async (query) => {
      const r = await t.call('GET', `/content/mine?${query}`, { token });
      expect(r.status, r.raw.body.slice(0, 200)).toBeLessThan(500);
      if (r.status >= 400) expectError(r, r.status);
    },
  );

  it.each([101, 128])('answers a path id of %i characters like any unknown id: 404 not-found', async (length) => {
    const id = 'a'.repeat(length);
    for (const url of [`/content/${id}`, `/card/${id}`, `/card/family/library/groups/${id}`, `/wishlists/${id}`]) {
      expectError(await t.call('GET', url, { token }), 404, 'not-found');
    }
    expectError(await t.call('PUT', `/wishlists/${id}`, { token, body: { content: [] } }), 404, 'not-found');
    expectError(await t.call('PUT', `/card/family/library/groups/${id}`, { token, body: { name: 'x' } }), 404, 'not-found');
  });

  it('asks for a token before looking at a path id of up to 128 characters', async () => {
    expectError(await t.call('GET', `/card/${'a'.repeat(120)}`), 401, 'unauthorized');
  });

  it('answers a path id over 128 characters with 400 bad-request', async () => {
    expectError(await t.call('GET', `/card/${'a'.repeat(129)}`, { token }), 400, 'bad-request');
  });
});

describe('CORS', () => {
  const origin = 'https://app.example.com';

  it.each([
    ['GET', '/content/mine'],
    ['POST', '/content'],
    ['PUT', '/card/family/library/groups/abc'],
    ['DELETE', '/wishlists/abc'],
  ])('answers the preflight of %s %s without a token', async (method, url) => {
    const r = await t.call('OPTIONS', url, {
      headers: {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(r.status).toBe(204);
    expect(r.headers['access-control-allow-origin']).toBe('*');
    expect(String(r.headers['access-control-allow-methods'])).toContain(method);
    expect(String(r.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
  });

  it('lets a browser read the answers, errors included', async () => {
    const ok = await t.call('GET', '/card/mine', { token, headers: { origin } });
    expect(ok.headers['access-control-allow-origin']).toBe('*');
    const denied = await t.call('GET', '/card/mine', { headers: { origin } });
    expect(denied.status).toBe(401);
    expect(denied.headers['access-control-allow-origin']).toBe('*');
  });

  it.each<Record<string, string>>([{}, { origin }])('answers an OPTIONS that is not a full preflight (%j) without an error', async (headers) => {
    const r = await t.call('OPTIONS', '/content/mine', { headers });
    expect(r.status, r.raw.body).toBe(204);
    expect(String(r.headers['access-control-allow-methods'])).toContain('GET');
  });
});

describe('errors of the HTTP layer, before a request is formed', () => {
  /** Writes `raw` to a listening copy of the app and returns what came back. */
  async function rawExchange(raw: string): Promise<string> {
    const address = t.app.server.address() ?? (await t.app.listen({ port: 0, host: '127.0.0.1' }), t.app.server.address());
    const { port } = address as AddressInfo;
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(raw));
      let out = '';
      socket.on('data', (d) => (out += d.toString()));
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
    });
  }

  function parse(response: string): { status: number; contentType: string; body: any } {
    const [head = '', body = ''] = response.split('\r\n\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
    const contentType = /\r\ncontent-type: ([^\r]*)/i.exec(head)?.[1] ?? '';
    return { status, contentType, body: JSON.parse(body) };
  }

  it.each([
    ['a malformed header line', 'GET /card/mine HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 400, 'bad-request'],
    ['a malformed Content-Length', 'POST /wishlists HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'bad-request'],
    ['headers over the limit', `GET /card/mine HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers-too-large'],
  ])('answers %s in the documented error shape', async (_label, raw, status, code) => {
    const r = parse(await rawExchange(raw));
    expect(r.status).toBe(status);
    expect(r.contentType).toMatch(/^application\/json/);
    expect(Object.keys(r.body)).toEqual(['error']);
    expect(r.body.error.code).toBe(code);
    expect(typeof r.body.error.message).toBe('string');
  });
});

describe('5xx never carry internals', () => {
  it('answers an error without a stack, SQL or file paths', async () => {
    // The nastiest inputs of the suite, all at once: none may leak internals in any answer.
    const inputs: [string, string, string?][] = [
      ['GET', `/content/${"'".repeat(50)}`],
      ['POST', '/content', '{"title":"x","cardId":"\' OR 1=1 --"}'],
      ['POST', '/content', `{"title":"x","content":{"chapters":[{"key":"01","tracks":[${'{"key":"1","type":"audio","trackUrl":"service:#a"},'.repeat(500)}{"key":"1","type":"audio","trackUrl":"x"}]}]}}`],
    ];
    for (const [method, url, rawBody] of inputs) {
      const r = await t.call(method, url, { token, rawBody, headers: rawBody ? json : {} });
      expect(r.status).toBeLessThan(500);
      expect(r.raw.body).not.toMatch(/at .*\.(ts|js):\d+|SQLITE|select .* from|node_modules|\/work\//i);
    }
  });
});

describe('documentation and operations', () => {
  it('serves an OpenAPI 3.1 document listing every route of the interface', async () => {
    const r = expectStatus(await t.call('GET', '/openapi.json'), 200);
    expect(r.body.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof r.body.info?.title).toBe('string');
    const paths = r.body.paths as Record<string, Record<string, any>>;
    const expected: [string, string][] = [
      ['get', '/content/mine'],
      ['get', '/card/mine'],
      ['get', '/content/{cardId}'],
      ['get', '/card/{cardId}'],
      ['post', '/content'],
      ['delete', '/content/{cardId}'],
      ['get', '/user/family'],
      ['post', '/card/family/library'],
      ['get', '/card/family/library'],
      ['post', '/card/family/library/groups'],
      ['get', '/card/family/library/groups'],
      ['get', '/card/family/library/groups/{groupId}'],
      ['put', '/card/family/library/groups/{groupId}'],
      ['delete', '/card/family/library/groups/{groupId}'],
      ['post', '/wishlists'],
      ['put', '/wishlists/{wishlistId}'],
      ['get', '/wishlists'],
      ['get', '/wishlists/{wishlistId}'],
      ['delete', '/wishlists/{wishlistId}'],
      ['put', '/admin/cards/{cardId}'],
      ['put', '/admin/families/{familyId}'],
    ];
    for (const [method, path] of expected) {
      expect(paths[path], `${path} is missing`).toBeDefined();
      expect(paths[path]?.[method], `${method.toUpperCase()} ${path} is missing`).toBeDefined();
    }
    expect(Object.keys(paths).some((p) => p.startsWith('/wishlists/shared/'))).toBe(true);
    // The interface's two list paths take showdeleted; the bearer scheme is declared.
    for (const path of ['/content/mine', '/card/mine']) {
      const names = (paths[path]?.get.parameters ?? []).map((p: { name: string }) => p.name);
      expect(names).toContain('showdeleted');
    }
    expect(r.body.components?.securitySchemes?.bearer?.scheme).toBe('bearer');
    expect(paths['/content/mine']?.get.security).toEqual([{ bearer: ['user:content:view'] }]);
  });

  it('serves /docs', async () => {
    let r = await t.call('GET', '/docs');
    if (r.status >= 300 && r.status < 400) r = await t.call('GET', String(r.headers.location));
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type'])).toMatch(/text\/html/);
    expect(r.raw.body).toMatch(/swagger/i);
  });

  it.each(['/healthz', '/readyz'])('answers %s with 200 and a JSON body, without a token', async (url) => {
    const r = expectStatus(await t.call('GET', url), 200);
    expect(r.body).toEqual({ status: 'ok' });
  });
});

describe('a database held busy by another process', () => {
  it.runIf(process.env.CARDSHELF_TEST_DB !== 'postgres')(
    'answers 503 unavailable with Retry-After once busy_timeout passes, not 500',
    async () => {
      const { default: SQLite } = await import('better-sqlite3');
      const other = new SQLite(`${t.dataDir}/cardshelf.db`);
      other.exec('begin immediate');
      try {
        const r = await t.call('POST', '/wishlists', { token, body: { content: [{ item: 'busy1' }] } });
        expectError(r, 503, 'unavailable');
        expect(r.headers['retry-after']).toBe('1');
      } finally {
        other.exec('rollback');
        other.close();
      }
      const after = await t.call('POST', '/wishlists', { token, body: { content: [{ item: 'busy2' }] } });
      expect(after.status).toBe(201);
    },
  );
});
