import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/shared/errors.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { contractChecker } from '../support/contract.js';
import { testDialect } from '../support/test-database.js';

type Operation = {
  operationId: string;
  security: Record<string, string[]>[];
  description?: string;
  responses: Record<string, { $ref?: string; description?: string }>;
};

describe(`the OpenAPI document on ${testDialect()}`, () => {
  let t: TestApp;
  let doc: any;
  const operations: [string, string, Operation][] = [];
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000' });
    doc = (await t.call('GET', '/openapi.json')).body;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(item)) operations.push([method.toUpperCase(), path, op]);
    }
  });
  afterAll(() => t.close());

  it('derives security, 401/403 and the scope text from what each route declares', () => {
    const op = (method: string, path: string): Operation => operations.find(([m, p]) => m === method && p === path)![2];
    // Public: no token.
    expect(op('GET', '/healthz').security).toEqual([]);
    expect(op('GET', '/healthz').responses).not.toHaveProperty('401');
    // A scope: 401 and 403, and the scope named in the requirement and the text.
    const scoped = op('GET', '/content/mine');
    expect(scoped.security).toEqual([{ bearer: ['user:content:view'] }]);
    expect(Object.keys(scoped.responses)).toEqual(expect.arrayContaining(['401', '403']));
    expect(scoped.description).toContain('Needs the scope `user:content:view` (or `user:content:manage`).');
    expect(op('PUT', '/admin/cards/{cardId}').security).toEqual([{ bearer: ['admin'] }]);
    // Any valid token: 401, and 403 only for a registered player's credential (issue 22)...
    const anyToken = op('GET', '/card/mine');
    expect(anyToken.security).toEqual([{ bearer: [] }]);
    expect(anyToken.responses).toHaveProperty('401');
    expect(anyToken.responses).toHaveProperty('403');
    // ...unless the route is open to players too: then never 403.
    const players = op('GET', '/card/{cardId}');
    expect(players.security).toEqual([{ bearer: [] }]);
    expect(players.responses).toHaveProperty('401');
    expect(players.responses).not.toHaveProperty('403');
  });

  it('gives every operation a unique id, real descriptions and the shared error responses', () => {
    expect(operations.length).toBeGreaterThanOrEqual(25);
    const ids = operations.map(([, , op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [method, path, op] of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) >= 400) {
          expect(response.$ref, `${method} ${path} ${status}`).toMatch(/^#\/components\/responses\//);
        } else {
          expect(response.description, `${method} ${path} ${status}`).not.toBe('Default Response');
        }
      }
      expect(op.responses, `${method} ${path}`).toHaveProperty('503');
      expect(op.responses, `${method} ${path}`).toHaveProperty('429');
    }
    expect(operations.find(([m, p]) => m === 'POST' && p === '/content')![2].responses).toHaveProperty('415');
  });

  it('shows under each error status only examples of codes that status carries', () => {
    const responses = doc.components.responses as Record<string, { content: Record<string, { examples: Record<string, { value: any }> }> }>;
    for (const status of ['400', '401', '403', '404', '405', '413', '415', '429', '503']) {
      const used = operations.map(([, , op]) => op.responses[status]?.$ref).find(Boolean) ?? '#/components/responses/MethodNotAllowed';
      const name = used.split('/').pop()!;
      const examples = Object.values(responses[name]!.content['application/json']!.examples);
      expect(examples.length, name).toBeGreaterThan(0);
      for (const { value } of examples) {
        expect(ERROR_STATUS[value.error.code as keyof typeof ERROR_STATUS], `${name}: ${value.error.code}`).toBe(Number(status));
      }
    }
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(doc.tags.map((tag: { name: string }) => tag.name)).toEqual(
      expect.arrayContaining(['cards', 'family', 'library', 'groups', 'wishlists', 'admin', 'operations']),
    );
    expect(doc.components.securitySchemes.bearer.description).toContain('cardshelf token');
  });

  it('the contract check finds an undocumented status and a body that does not match its schema', () => {
    const check = contractChecker(doc);
    const answer = { method: 'GET', route: '/wishlists/:wishlistId', contentType: 'application/json; charset=utf-8' };
    expect(check({ ...answer, status: 418, body: '{}' })).toMatch(/status 418 is not documented/);
    expect(check({ ...answer, status: 404, body: '{"error":{"code":"not-found"}}' })).toMatch(/message/);
    expect(check({ ...answer, status: 404, body: '{"error":{"code":"not-found","message":"wishlist not found"}}' })).toBeUndefined();
    expect(check({ ...answer, status: 200, body: '{"wishlistId":5}' })).toMatch(/wishlistId|required/);
    expect(check({ method: 'GET', route: undefined, status: 404, contentType: 'text/plain', body: 'no' })).toMatch(/content type/);
  });
});
