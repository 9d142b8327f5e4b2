import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, familyOf, newUser } from '../support/fixtures.js';
import { ALL_USER_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { testDialect } from '../support/test-database.js';

/**
 * Garbage at the sign-in engine and its pages, the players and the
 * invitations: never a 5xx, and every error in the shape its route documents (docs/api.md):
 * OAuth's `{"error", "error_description"}` from the engine's JSON endpoints, a page (or the
 * API's error shape) from the pages, the API's error shape elsewhere. Seeded and bounded, so it
 * runs in a few seconds on each store and a failure can be replayed (fast-check prints the seed
 * and path); FUZZ_SEED and FUZZ_RUNS try other inputs, or more.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 33);

/** The engine's paths (src/oauth/plugin.ts ENGINE_ROUTES) and the pages around it, each tried with GET and POST. */
const SIGN_IN_PATHS = [
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
  '/.well-known/jwks.json',
  '/authorize',
  '/authorize/:id',
  '/oauth/token',
  '/oauth/device/code',
  '/activate',
  '/activate/:id',
  '/oauth/revoke',
  '/userinfo',
  '/interaction/:id',
  '/interaction/:id/login',
  '/interaction/:id/confirm',
  '/interaction/:id/passkey/options',
  '/interaction/:id/passkey',
  '/account',
  '/account/sign-in',
  '/account/sign-out',
  '/account/apps/revoke',
  '/account/passkeys/options',
  '/account/passkeys',
  '/account/passkeys/remove',
  '/invitation/:id',
  '/setup/:id',
  '/signup',
];

/** The API's routes of players and invitations; `:id` is a registered player's id or garbage. */
const API_ROUTES: [string, string][] = [
  ['GET', '/device-v2/devices/mine'],
  ['POST', '/device-v2/devices/mine'],
  ['DELETE', '/device-v2/:id'],
  ['GET', '/device-v2/:id/status'],
  ['PUT', '/device-v2/:id/status'],
  ['GET', '/device-v2/:id/config'],
  ['PUT', '/device-v2/:id/config'],
  ['PATCH', '/device-v2/:id/config'],
  ['PUT', '/device-v2/:id/shortcuts'],
  ['POST', '/device-v2/:id/command'],
  ['POST', '/user/invitations'],
];

/** The parameters the engine and the pages read. */
const PARAMETERS = [
  'client_id',
  'scope',
  'grant_type',
  'refresh_token',
  'device_code',
  'code',
  'code_verifier',
  'token',
  'token_type_hint',
  'redirect_uri',
  'response_type',
  'response_mode',
  'code_challenge',
  'code_challenge_method',
  'state',
  'nonce',
  'prompt',
  'max_age',
  'claims',
  'request',
  'resource',
  'audience',
  'user_code',
  'xsrf',
  'confirm',
  'abort',
  'csrf',
  'email',
  'password',
  'name',
  'decision',
  'grant',
  'id',
  'response',
];

// Any UTF-16 code unit, NUL, controls and lone surrogates included.
const codeUnit = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
);
const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: codeUnit, maxLength: 20 }),
  fc.constantFrom('\u0000', 'a\u0000b', '', ' ', 'openid profile offline_access', 'urn:ietf:params:oauth:grant-type:device_code', 'refresh_token', 'authorization_code', 'yoto-device-client', 'myapp', 'cardshelf-web', 'BCDF-GHJK', 'x'.repeat(5000)),
);

/** Every byte percent-encoded (a lone surrogate as U+FFFD's), so any text makes a valid URL. */
const pct = (value: string): string => [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
const pathId = fc.oneof(text.map(pct), fc.constantFrom('%ZZ', '%00', '..', 'a'.repeat(300)));
const formOf = (pairs: [string, string][]): string => pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&');
/** Parameters as a form or a query: the ones read, some twice, and any other name. */
const parameters = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PARAMETERS), fc.constantFrom(...PARAMETERS), text), text), { maxLength: 8 });
const contentType = fc.constantFrom('application/x-www-form-urlencoded', 'application/x-www-form-urlencoded', 'application/json', 'text/plain', 'multipart/form-data; boundary=x', '');
const address = fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `10.33.${a}.${b}`);

/** The error shape each kind of route documents. */
function expectDocumentedError(answer: LightMyRequestResponse, route: string, what: string): void {
  expect(answer.statusCode, `${what} -> ${answer.body.slice(0, 300)}`).toBeLessThan(500);
  if (answer.statusCode < 400) return;
  const type = String(answer.headers['content-type'] ?? '');
  if (type.startsWith('text/html')) {
    expect(route, `${what}: an HTML error from a JSON route`).toMatch(/^\/(activate|authorize|interaction|account|invitation|setup|signup)/);
    return;
  }
  expect(type, what).toMatch(/^application\/json/);
  const body = JSON.parse(answer.body) as { error?: unknown; error_description?: unknown };
  if (typeof body.error === 'string') {
    // The engine's own answers; 404 and 405 (no such path or method) are the app's.
    expect(route, `${what}: an OAuth error from elsewhere than the engine`).toMatch(/^\/(oauth\/|userinfo$)/);
    expect(body.error, what).toMatch(/^[a-z_]+$/);
    if (body.error_description !== undefined) expect(typeof body.error_description, what).toBe('string');
  } else {
    expect((body.error as { code?: unknown })?.code, what).toMatch(/^[a-z]+(-[a-z]+)*$/);
    expect(typeof (body.error as { message?: unknown })?.message, what).toBe('string');
  }
}

describe(`fuzz: the sign-in engine, its pages, players and invitations on ${testDialect()}`, { timeout: 120_000 }, () => {
  let t: TestApp;
  let token: string;
  let deviceId: string;
  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: 'http://localhost', SIGNUP: 'open' });
    const userId = newUser('fuzzer');
    await familyOf(t, [userId]);
    token = await t.token(userId, ALL_USER_SCOPES);
    deviceId = await register('Kitchen');
  });
  afterAll(() => t?.close());

  const register = async (name: string): Promise<string> =>
    (expectStatus(await t.call('POST', '/device-v2/devices/mine', { token, body: { name } }), 201).body as { device: { deviceId: string } }).device.deviceId;

  it('forms, queries and bodies of any kind to the engine and the pages', async () => {
    await fc.assert(
      fc.asyncProperty(fc.tuple(fc.constantFrom('GET', 'POST'), fc.constantFrom(...SIGN_IN_PATHS)), pathId, parameters, parameters, contentType, address, async ([method, route], id, query, form, type, from) => {
        const url = `${route.replace(':id', id)}${query.length ? `?${formOf(query)}` : ''}`;
        const payload = type === 'application/json' ? JSON.stringify(Object.fromEntries(form)) : formOf(form);
        const answer = await t.app.inject({ method: method as 'GET', url, remoteAddress: from, headers: type ? { 'content-type': type } : {}, ...(method === 'GET' ? {} : { payload }) });
        expectDocumentedError(answer, route, `${method} ${url} ${type} ${payload.slice(0, 200)}`);
      }),
      { seed: SEED, numRuns: Number(process.env.FUZZ_RUNS ?? 400) },
    );
  });

  it('JSON of any shape to the players and invitations, the family\'s player or any id', async () => {
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 3, stringUnit: codeUnit }),
      fc.record({ name: text, config: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.dictionary(text, text, { maxKeys: 4 })), deviceId: text, command: text, cardId: text }, { requiredKeys: [] }),
      fc.constant({}),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...API_ROUTES), fc.oneof(fc.constant(null), pathId), body, async ([method, route], id, json) => {
        const url = route.replace(':id', id ?? deviceId);
        const answer = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(json) });
        expectDocumentedError(answer, route, `${method} ${url} ${JSON.stringify(json)?.slice(0, 200)}`);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('PATCH and PUT of a player\'s config with {} change nothing and answer 200', async () => {
    const deviceId = await register('Hall');
    const before: unknown = expectStatus(await t.call('GET', `/device-v2/${deviceId}/config`, { token }), 200).body;
    for (const method of ['PATCH', 'PUT']) expectStatus(await t.call(method, `/device-v2/${deviceId}/config`, { token, body: {} }), 200);
    expect(expectStatus(await t.call('GET', `/device-v2/${deviceId}/config`, { token }), 200).body).toEqual(before);
  });
});
