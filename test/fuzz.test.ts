import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type Reply, type TestApp } from './helpers.js';

/**
 * Garbage in, a clear 4xx out: whatever a client sends to any route, the answer is never a
 * 5xx, and every error has the documented shape.
 */
const ROUTES: [string, string][] = [
  ['GET', '/content/mine'],
  ['GET', '/card/mine'],
  ['GET', '/content/:id'],
  ['GET', '/card/:id'],
  ['POST', '/content'],
  ['DELETE', '/content/:id'],
  ['GET', '/user/family'],
  ['POST', '/card/family/library'],
  ['GET', '/card/family/library'],
  ['POST', '/card/family/library/groups'],
  ['GET', '/card/family/library/groups'],
  ['GET', '/card/family/library/groups/:id'],
  ['PUT', '/card/family/library/groups/:id'],
  ['DELETE', '/card/family/library/groups/:id'],
  ['POST', '/wishlists'],
  ['GET', '/wishlists'],
  ['PUT', '/wishlists/:id'],
  ['GET', '/wishlists/:id'],
  ['DELETE', '/wishlists/:id'],
  ['GET', '/wishlists/shared/:id'],
  ['PUT', '/admin/cards/:id'],
  ['PUT', '/admin/families/:id'],
];

function expectSane(reply: Reply, what: string): void {
  expect(reply.status, `${what} -> ${reply.raw.body.slice(0, 200)}`).toBeLessThan(500);
  if (reply.status >= 400) {
    expect(reply.body?.error?.code, what).toMatch(/^[a-z]+(-[a-z]+)*$/);
    expect(typeof reply.body?.error?.message, what).toBe('string');
  }
}

describe('fuzz: no 5xx for anything a client sends', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp();
    token = await t.token('auth0|fuzzer', 'user:content:manage family:library:manage admin');
  });
  afterAll(() => t.close());

  const route = fc.constantFrom(...ROUTES);
  const pathId = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('dmFr1', 'mine', '..', '%00', 'a'.repeat(300)));
  const body = fc.oneof(
    fc.jsonValue({ maxDepth: 6 }),
    fc.record({ title: fc.anything(), content: fc.anything(), metadata: fc.anything(), cardId: fc.anything() }),
    fc.record({ content: fc.array(fc.record({ item: fc.anything() }, { requiredKeys: [] })) }),
    fc.record({ name: fc.anything(), imageId: fc.anything(), items: fc.anything() }),
    fc.record({ country: fc.anything(), members: fc.anything(), devices: fc.anything() }),
  );

  it('valid JSON of any shape, to every route', async () => {
    await fc.assert(
      fc.asyncProperty(route, pathId, body, async ([method, path], id, payload) => {
        const url = path.replace(':id', encodeURIComponent(id));
        const reply = await t.call(method, url, { token, body: payload ?? null });
        expectSane(reply, `${method} ${url}`);
      }),
      { numRuns: 400 },
    );
  });

  it('raw bytes and odd content types, to every route', async () => {
    const contentType = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
      'application/json; charset=utf-16',
    );
    await fc.assert(
      fc.asyncProperty(route, fc.string({ maxLength: 200 }), contentType, async ([method, path], raw, type) => {
        const url = path.replace(':id', 'abcde');
        const headers: Record<string, string> = type ? { 'content-type': type } : {};
        const reply = await t.call(method, url, { token, rawBody: raw, headers });
        expectSane(reply, `${method} ${url} ${type}`);
      }),
      { numRuns: 300 },
    );
  });

  it('odd query strings and authorization headers', async () => {
    await fc.assert(
      fc.asyncProperty(route, fc.string({ maxLength: 60 }), fc.string({ maxLength: 80 }), async ([method, path], query, auth) => {
        const url = `${path.replace(':id', 'abcde')}?${encodeURIComponent(query)}=${encodeURIComponent(query)}&showdeleted=${encodeURIComponent(query)}`;
        const withToken = await t.call(method, url, { token });
        expectSane(withToken, `${method} ${url}`);
        const withJunk = await t.call(method, url, { headers: { authorization: `Bearer ${auth.replace(/[\r\n]/g, '')}` } });
        expect(withJunk.status).toBe(401);
        expectSane(withJunk, `${method} ${url} junk token`);
      }),
      { numRuns: 200 },
    );
  });

  it('nesting too deep for the stack is a 400', async () => {
    const deep = `{"title":"x","metadata":{"list":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
    const reply = await t.call('POST', '/content', { token, rawBody: deep, headers: { 'content-type': 'application/json' } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toMatch(/deeper/);
  });

  it('a malformed URL gets the documented error shape', async () => {
    const reply = await t.call('GET', '/content/%ZZ', { token });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('bad-request');
  });
});
