import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app.js';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers health and lists cards for a token', async () => {
    expect((await t.call('GET', '/healthz')).status).toBe(200);
    const token = await t.token('auth0|smoke');
    const r = await t.call('GET', '/content/mine', { token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ cards: [] });
  });
});
