import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody, errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import { expectStatus, newUser } from '../support/fixtures.js';

/**
 * An external OpenID Connect issuer (Auth0-like: RS256, scopes in `scope` or `permissions`),
 * played by a local HTTP server that publishes the issuer's JWKS.
 */
const ISSUER = 'https://tenant.auth.example/';
const AUDIENCE = 'https://cardshelf.example/api';
const KID = 'issuer-key-1';

let server: Server;
let hits = 0;
let issuerKey: CryptoKey;
let t: TestApp;
/** The issuer's settings, its JWKS at the local server. */
let issuerEnv: Record<string, string>;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  issuerKey = pair.privateKey;
  const publicJwk = { ...(await exportJWK(pair.publicKey)), kid: KID, alg: 'RS256', use: 'sig' };
  server = createServer((req, res) => {
    hits += 1;
    if (req.url === '/.well-known/jwks.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [publicJwk] }));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  issuerEnv = { AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, AUTH_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json` };
  t = await startTestApp(issuerEnv);
});

afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => server?.close(resolve));
});

async function issue(claims: JWTPayload & { scope?: string; permissions?: string[] }, key = issuerKey, kid = KID, typ = 'JWT'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid, typ })
    .sign(key);
}

function expectUnauthorized(r: Reply): void {
  expect(r.status, r.raw.body.slice(0, 300)).toBe(401);
  expect(errorCode(r)).toBe('unauthorized');
  expect(String(r.headers['www-authenticate'])).toMatch(/^Bearer/);
}

describe('external OpenID Connect issuer', () => {
  it('is the configured mode', () => {
    expect(t.config.auth.mode).toBe('oidc');
  });

  it('accepts a token of the issuer, fetching its keys', async () => {
    const sub = newUser('oidc');
    const token = await issue({ sub, scope: 'openid user:content:manage' });
    const created = expectStatus(await t.call('POST', '/content', { token, body: cardBody('From OIDC') }), 201);
    expect(created.body.card.userId).toBe(sub);
    const list = expectStatus(await t.call('GET', '/content/mine', { token }), 200);
    expect(list.body.cards.map((c: { cardId: string }) => c.cardId)).toEqual([created.body.card.cardId]);
    expect(hits).toBeGreaterThan(0);
  });

  it('takes scopes from the permissions claim', async () => {
    const token = await issue({ sub: newUser('rbac'), permissions: ['user:content:view'] });
    expectStatus(await t.call('GET', '/content/mine', { token }), 200);
    const r = await t.call('POST', '/content', { token, body: cardBody() });
    expect(r.status).toBe(403);
    expect(errorCode(r)).toBe('forbidden');
  });

  it('does not publish a JWKS of its own', async () => {
    const r = await t.call('GET', '/.well-known/jwks.json');
    expect(r.status).toBe(404);
    expect(errorCode(r)).toBe('not-found');
  });

  it.each([
    ['another issuer', { iss: 'https://evil.example/' }],
    ['another audience', { aud: 'cardshelf' }],
    ['an expired token', { exp: Math.floor(Date.now() / 1000) - 60 }],
    ['a token not valid yet', { nbf: Math.floor(Date.now() / 1000) + 600 }],
    ['no subject', { sub: undefined }],
  ])('refuses %s', async (_label, claims) => {
    const sub = newUser('bad');
    const token = await issue({ sub, scope: 'user:content:manage', ...claims });
    expectUnauthorized(await t.call('POST', '/content', { token, body: cardBody() }));
    const check = await issue({ sub, scope: 'user:content:view' });
    expect(expectStatus(await t.call('GET', '/content/mine', { token: check }), 200).body.cards).toEqual([]);
  });

  it('refuses a token signed by a key the issuer does not publish', async () => {
    const rogue = await generateKeyPair('RS256');
    expectUnauthorized(
      await t.call('GET', '/card/mine', { token: await issue({ sub: newUser('rogue') }, rogue.privateKey) }),
    );
    expectUnauthorized(
      await t.call('GET', '/card/mine', { token: await issue({ sub: newUser('rogue') }, rogue.privateKey, 'other-kid') }),
    );
  });

  it('refuses alg none and HS256 tokens', async () => {
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: newUser('none'), iss: ISSUER, aud: AUDIENCE, exp: now + 600 };
    expectUnauthorized(await t.call('GET', '/card/mine', { token: `${b64({ alg: 'none', kid: KID })}.${b64(claims)}.` }));
    const hs = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: KID })
      .sign(new TextEncoder().encode('a-shared-secret-that-nobody-should-accept'));
    expectUnauthorized(await t.call('GET', '/card/mine', { token: hs }));
  });
});

describe('an unreachable issuer', () => {
  it('is not the caller’s fault: no 401, no 2xx, no internals', async () => {
    const u = await startTestApp({
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
      // Nothing listens on port 9 (discard) of the loopback address in the test environment.
      AUTH_JWKS_URL: 'http://127.0.0.1:9/.well-known/jwks.json',
    });
    try {
      const token = await issue({ sub: newUser('offline'), scope: 'user:content:view' });
      const r = await u.call('GET', '/content/mine', { token });
      expect(r.status, r.raw.body.slice(0, 300)).toBe(503);
      expect(Object.keys(r.body)).toEqual(['error']);
      expect(errorCode(r)).toBe('unavailable');
      expect(r.headers['retry-after']).toBe('5');
      expect(r.raw.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|node_modules|at .*\.js:\d+/);
      // A malformed token is still the caller's fault, whatever the issuer's state.
      expect((await u.call('GET', '/content/mine', { token: 'garbage' })).status).toBe(401);
    } finally {
      await u.close();
    }
  });
});

describe('the type of an external issuer\'s tokens (AUTH_TOKEN_TYPE)', () => {
  let typed: TestApp;
  beforeAll(async () => {
    typed = await startTestApp({ ...issuerEnv, AUTH_TOKEN_TYPE: 'at+jwt' });
  });
  afterAll(async () => typed?.close());

  it.each([
    ['unset', 'JWT', 200],
    ['unset', 'at+jwt', 200],
    ['at+jwt', 'JWT', 401],
    ['at+jwt', 'at+jwt', 200],
    ['at+jwt', 'application/at+jwt', 200],
  ] as const)('AUTH_TOKEN_TYPE %s, a token of typ %s: %i', async (setting, typ, status) => {
    const token = await issue({ sub: newUser('typed'), scope: 'user:content:view' }, issuerKey, KID, typ);
    const r = await (setting === 'unset' ? t : typed).call('GET', '/content/mine', { token });
    expect(r.status, r.raw.body.slice(0, 300)).toBe(status);
  });
});
