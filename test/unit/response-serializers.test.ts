import Fastify, { type FastifyServerOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { buildSerializer } from '../../src/http/response-serializers.js';

/**
 * src/http/response-serializers.ts compiles each response schema with only the shared schemas it
 * names: the answers must be those of Fastify's own compiler, refs through refs included.
 */
const Inner = { $id: 'Inner', type: 'object', properties: { n: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } } };
const Outer = { $id: 'Outer', type: 'object', properties: { name: { type: 'string' }, inner: { $ref: 'Inner#' }, list: { type: 'array', items: { $ref: 'Inner' } } } };
const Unnamed = { $id: 'Unnamed', type: 'object', properties: { secret: { type: 'string' } } };
const BODY = {
  outer: { name: 'x', extra: 'dropped', inner: { n: 3, tags: ['a'], also: 'dropped' }, list: [{ n: 1 }, { n: '2', tags: [] }] },
  either: { name: 'y', inner: { n: 4, secret: 'dropped' } },
  dropped: true,
};

async function answer(schemaController?: FastifyServerOptions['schemaController']): Promise<string> {
  const app = Fastify(schemaController ? { schemaController } : {});
  for (const schema of [Inner, Outer, Unnamed]) app.addSchema(schema);
  const response = { 200: { type: 'object', properties: { outer: { $ref: 'Outer#' }, either: { anyOf: [{ $ref: 'Outer' }, { type: 'null' }] } } } };
  app.get('/', { schema: { response } }, async () => BODY);
  const r = await app.inject({ method: 'GET', url: '/' });
  await app.close();
  expect(r.statusCode).toBe(200);
  return r.body;
}

describe('response serializers given the shared schemas they name', () => {
  // The route names Outer only; Outer names Inner.
  it("answer what Fastify's own compiler answers, through refs of refs, unknown fields dropped", async () => {
    const ours = await answer({ compilersFactory: { buildSerializer } });
    expect(ours).toBe(await answer());
    expect(JSON.parse(ours)).toEqual({ outer: { name: 'x', inner: { n: 3, tags: ['a'] }, list: [{ n: 1 }, { n: 2, tags: [] }] }, either: { name: 'y', inner: { n: 4 } } });
  });
});
