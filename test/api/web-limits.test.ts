import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../web/src/limits.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { testDialect } from '../support/test-database.js';

/** The web app's field limits (web/src/limits.ts) are the server's, as its OpenAPI document states them. */
describe(`the web app's field limits on ${testDialect()}`, () => {
  let t: TestApp;
  let paths: Record<string, Record<string, { requestBody: { content: { 'application/json': { schema: { properties: Record<string, { maxLength?: number }> } } } } }>>;
  beforeAll(async () => {
    t = await startTestApp();
    paths = (await t.call('GET', '/openapi.json')).body.paths;
  });
  afterAll(() => t.close());

  it.each([['cardTitle', 'POST', '/content', 'title']] as const)('%s is the maxLength of %s %s body.%s', (limit, method, path, field) => {
    const body = paths[path]?.[method.toLowerCase()]?.requestBody.content['application/json'].schema;
    expect(body?.properties[field]?.maxLength).toBe(LIMITS[limit]);
  });
});
