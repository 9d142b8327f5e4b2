import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_ALG, loadOrCreateSigningKey, type SigningKey } from '../../src/auth/local-issuer.js';
import { cardBody, errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import { catalogueCard, controlledClock, expectStatus, newCardId, newUser, putCatalogueCard } from '../support/fixtures.js';

let t: TestApp;
let key: SigningKey;
let issuer: string;
let audience: string;

beforeAll(async () => {
  t = await startTestApp();
  if (t.config.auth.mode !== 'local') throw new Error('these tests need the local issuer');
  key = await loadOrCreateSigningKey(t.config.auth.keyFile);
  issuer = t.config.auth.issuer;
  audience = t.config.auth.audience;
});
afterAll(() => t.close());

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const nowSec = (): number => Math.floor(Date.now() / 1000);

interface Claims extends JWTPayload {
  scope?: string;
  permissions?: unknown;
}

/** A token signed with the server's own key, with exactly the claims given. */
async function signed(claims: Claims, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: LOCAL_ALG, kid: key.kid, typ: 'JWT', ...header } as { alg: string })
    .sign(key.privateKey);
}

/** Valid claims for `sub`, with a scope allowing every user route. */
function goodClaims(sub: string, extra: Claims = {}): Claims {
  const at = nowSec();
  return {
    sub,
    iss: issuer,
    aud: audience,
    iat: at,
    exp: at + 3600,
    scope: 'user:content:manage family:library:manage',
    ...extra,
  };
}

/** The number of cards `sub` owns, deleted ones included, asked with a good token. */
async function cardCount(sub: string): Promise<number> {
  const r = expectStatus(
    await t.call('GET', '/content/mine?showdeleted=true', { token: await t.token(sub, 'user:content:view') }),
    200,
  );
  return r.body.cards.length;
}

function expectUnauthorized(r: Reply): void {
  expect(r.status, r.raw.body.slice(0, 300)).toBe(401);
  expect(errorCode(r)).toBe('unauthorized');
  const challenge = r.headers['www-authenticate'];
  expect(typeof challenge).toBe('string');
  expect(challenge as string).toMatch(/^Bearer(\s|$)/);
}

function expectForbidden(r: Reply): void {
  expect(r.status, r.raw.body.slice(0, 300)).toBe(403);
  expect(errorCode(r)).toBe('forbidden');
}

describe('401 unauthorized', () => {
  type Case = [label: string, authorization: (sub: string) => Promise<string | undefined>];
  const cases: Case[] = [
    ['no Authorization header', async () => undefined],
    ['an empty Authorization header', async () => ''],
    ['the Basic scheme', async () => `Basic ${Buffer.from('user:pass').toString('base64')}`],
    ['a valid token under another scheme', async (sub) => `Token ${await signed(goodClaims(sub))}`],
    ['a valid token without a scheme', async (sub) => signed(goodClaims(sub))],
    ['Bearer without a token', async () => 'Bearer'],
    ['Bearer and a space only', async () => 'Bearer '],
    ['a token that is not a JWT', async () => 'Bearer not-a-token'],
    ['a token of three garbage parts', async () => 'Bearer abc.def.ghi'],
    ['a token whose header is not JSON', async () => `Bearer ${Buffer.from('nope').toString('base64url')}.e30.c2ln`],
    ['two tokens', async (sub) => `Bearer ${await signed(goodClaims(sub))} ${await signed(goodClaims(sub))}`],
    [
      'an expired token',
      async (sub) => `Bearer ${await signed(goodClaims(sub, { iat: nowSec() - 7200, exp: nowSec() - 3600 }))}`,
    ],
    ['a token expiring right now', async (sub) => `Bearer ${await signed(goodClaims(sub, { exp: nowSec() - 1 }))}`],
    ['a token not valid yet (nbf in the future)', async (sub) => `Bearer ${await signed(goodClaims(sub, { nbf: nowSec() + 3600 }))}`],
    [
      'a token signed by another key with the same kid',
      async (sub) => {
        const other = await generateKeyPair(LOCAL_ALG, { crv: 'Ed25519' });
        const token = await new SignJWT(goodClaims(sub))
          .setProtectedHeader({ alg: LOCAL_ALG, kid: key.kid, typ: 'JWT' })
          .sign(other.privateKey);
        return `Bearer ${token}`;
      },
    ],
    [
      'a token signed by another key with its own kid',
      async (sub) => {
        const other = await generateKeyPair(LOCAL_ALG, { crv: 'Ed25519' });
        const token = await new SignJWT(goodClaims(sub))
          .setProtectedHeader({ alg: LOCAL_ALG, kid: 'someone-else', typ: 'JWT' })
          .sign(other.privateKey);
        return `Bearer ${token}`;
      },
    ],
    [
      'a token signed by an RSA key',
      async (sub) => {
        const other = await generateKeyPair('RS256');
        return `Bearer ${await new SignJWT(goodClaims(sub)).setProtectedHeader({ alg: 'RS256' }).sign(other.privateKey)}`;
      },
    ],
    [
      'an HS256 token keyed with the public key',
      async (sub) => {
        const secret = new TextEncoder().encode(JSON.stringify(key.publicJwk));
        return `Bearer ${await new SignJWT(goodClaims(sub)).setProtectedHeader({ alg: 'HS256', kid: key.kid }).sign(secret)}`;
      },
    ],
    [
      'a token whose payload was changed after signing',
      async (sub) => {
        const [h, , s] = (await signed(goodClaims('auth0|somebody-else'))).split('.');
        return `Bearer ${h}.${b64url(goodClaims(sub))}.${s}`;
      },
    ],
    ['an alg none token', async (sub) => `Bearer ${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(goodClaims(sub))}.`],
    [
      'an alg none token with the kid of the server key',
      async (sub) => `Bearer ${b64url({ alg: 'none', kid: key.kid })}.${b64url(goodClaims(sub))}.`,
    ],
    [
      'an alg none token carrying a real signature',
      async (sub) => {
        const [, , s] = (await signed(goodClaims(sub))).split('.');
        return `Bearer ${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(goodClaims(sub))}.${s}`;
      },
    ],
    ['a token of another issuer', async (sub) => `Bearer ${await signed(goodClaims(sub, { iss: 'https://evil.example/' }))}`],
    ['a token without an issuer', async (sub) => `Bearer ${await signed(goodClaims(sub, { iss: undefined }))}`],
    ['a token for another audience', async (sub) => `Bearer ${await signed(goodClaims(sub, { aud: 'another-api' }))}`],
    ['a token without an audience', async (sub) => `Bearer ${await signed(goodClaims(sub, { aud: undefined }))}`],
    ['a token without a subject', async (sub) => `Bearer ${await signed(goodClaims(sub, { sub: undefined }))}`],
    ['a token with an empty subject', async () => `Bearer ${await signed(goodClaims('', {}))}`],
    ['a token with a numeric subject', async () => `Bearer ${await signed(goodClaims('x', { sub: 42 as unknown as string }))}`],
    ['a token without an expiry', async (sub) => `Bearer ${await signed(goodClaims(sub, { exp: undefined }))}`],
    ['a token whose expiry is not a number', async (sub) => `Bearer ${await signed(goodClaims(sub, { exp: 'tomorrow' as unknown as number }))}`],
    ['a token whose nbf is not a number', async (sub) => `Bearer ${await signed(goodClaims(sub, { nbf: 'now' as unknown as number }))}`],
  ];

  it.each(cases)('refuses %s, before the handler runs', async (_label, authorization) => {
    const sub = newUser('target');
    const value = await authorization(sub);
    const headers: Record<string, string> = value === undefined ? {} : { authorization: value };
    const r = await t.call('POST', '/content', { headers, body: cardBody('Should not exist') });
    expectUnauthorized(r);
    expect(await cardCount(sub)).toBe(0);
  });

  it.each(cases)('refuses %s on a read route too', async (_label, authorization) => {
    const sub = newUser('reader');
    const value = await authorization(sub);
    const headers: Record<string, string> = value === undefined ? {} : { authorization: value };
    for (const url of ['/content/mine', '/card/mine', '/user/family', '/wishlists']) {
      expectUnauthorized(await t.call('GET', url, { headers }));
    }
  });

  it('accepts the same kinds of token when they are right (the cases above fail for their flaw only)', async () => {
    const sub = newUser('good');
    const token = await signed(goodClaims(sub));
    expectStatus(await t.call('POST', '/content', { headers: { authorization: `Bearer ${token}` }, body: cardBody() }), 201);
    // The scheme is case-insensitive.
    expectStatus(await t.call('GET', '/card/mine', { headers: { authorization: `bearer ${token}` } }), 200);
    // A token with nbf in the past is fine.
    const nbfPast = await signed(goodClaims(sub, { nbf: nowSec() - 60 }));
    expectStatus(await t.call('GET', '/card/mine', { headers: { authorization: `Bearer ${nbfPast}` } }), 200);
    expect(await cardCount(sub)).toBe(1);
  });

  it('authenticates before it reads the body: an invalid body without a token is 401, not 400', async () => {
    const r = await t.call('POST', '/content', { rawBody: '{"title":', headers: { 'content-type': 'application/json' } });
    expectUnauthorized(r);
    const r2 = await t.call('POST', '/content', { rawBody: 'hello', headers: { 'content-type': 'text/plain' } });
    expectUnauthorized(r2);
  });

  it('refuses HEAD without a token', async () => {
    const r = await t.call('HEAD', '/content/mine');
    expect(r.status).toBe(401);
  });

  it('shows the user id of the token, not of the body', async () => {
    const sub = newUser('me');
    const r = expectStatus(
      await t.call('POST', '/content', { token: await t.token(sub), body: { ...cardBody(), userId: 'auth0|x' } }),
      201,
    );
    expect(r.body.card.userId).toBe(sub);
  });
});

describe('scopes', () => {
  let ownCard: string;
  let owner: string;
  beforeAll(async () => {
    owner = newUser('scoped-owner');
    const r = await t.call('POST', '/content', { token: await t.token(owner, 'user:content:manage'), body: cardBody() });
    ownCard = expectStatus(r, 201).body.card.cardId;
  });

  type Route = [method: string, url: () => string, scope: string | null, body?: () => unknown];
  const G = '/card/family/library/groups';
  const routes: Route[] = [
    ['GET', () => '/content/mine', 'user:content:view'],
    ['GET', () => `/content/${ownCard}`, 'user:content:view'],
    ['POST', () => '/content', 'user:content:manage', () => cardBody('Scoped')],
    ['DELETE', () => `/content/${ownCard}`, 'user:content:manage'],
    ['GET', () => '/card/mine', null],
    ['GET', () => `/card/${ownCard}`, null],
    ['GET', () => '/user/family', null],
    ['GET', () => '/wishlists', null],
    ['POST', () => '/wishlists', null, () => ({ content: [{ item: 'abcde' }] })],
    ['GET', () => '/wishlists/nonexistent-wishlist-id', null],
    ['PUT', () => '/wishlists/nonexistent-wishlist-id', null, () => ({ content: [] })],
    ['DELETE', () => '/wishlists/nonexistent-wishlist-id', null],
    ['GET', () => '/wishlists/shared/nonexistent-share-id', null],
    ['GET', () => '/card/family/library', 'family:library:view'],
    ['GET', () => G, 'family:library:view'],
    ['GET', () => `${G}/000000000000000000000000`, 'family:library:view'],
    ['POST', () => '/card/family/library', 'family:library:manage', () => ({ cardId: 'ZZZZ1' })],
    ['POST', () => G, 'family:library:manage', () => ({ name: 'G', imageId: 'img', items: [] })],
    ['PUT', () => `${G}/000000000000000000000000`, 'family:library:manage', () => ({ name: 'G' })],
    ['DELETE', () => `${G}/000000000000000000000000`, 'family:library:manage'],
    ['PUT', () => `/admin/cards/${newCardId()}`, 'admin', () => catalogueCard('Admin card', 'premium')],
    ['PUT', () => `/admin/families/fam-scope-${Date.now()}`, 'admin', () => ({ country: 'US' })],
  ];

  const ALL_SCOPES = ['user:content:view', 'user:content:manage', 'family:library:view', 'family:library:manage', 'admin'];
  const includes = (held: string, required: string): boolean =>
    held === required || (required.endsWith(':view') && held === required.replace(/:view$/, ':manage'));

  async function callWith(route: Route, claims: Claims): Promise<Reply> {
    const [method, url, , body] = route;
    // Each call works on a fresh user, so that no call depends on what another did.
    const sub = claims.sub ?? newUser('scoped');
    const token = await signed(goodClaims(sub, { scope: undefined, ...claims }));
    return t.call(method, url(), { token, body: body?.() });
  }

  function expectAllowed(r: Reply, label: string): void {
    expect([401, 403], `${label}: ${r.status} ${r.raw.body.slice(0, 200)}`).not.toContain(r.status);
    expect(r.status, `${label}: ${r.raw.body.slice(0, 200)}`).toBeLessThan(500);
  }

  const scoped = routes.filter((r) => r[2] !== null);
  const open = routes.filter((r) => r[2] === null);

  it.each(scoped.map((r) => [`${r[0]} ${r[1]()}`, r[2], r] as const))(
    '%s is 403 for a valid token without %s',
    async (label, required, route) => {
      // No scope at all, an unrelated scope, and each of the other scopes that does not include it.
      const others = ALL_SCOPES.filter((s) => !includes(s, required as string));
      for (const scope of [undefined, '', 'openid profile email', ...others, others.join(' ')]) {
        const r = await callWith(route, { scope });
        expectForbidden(r);
        const challenge = r.headers['www-authenticate'];
        if (challenge !== undefined) expect(String(challenge)).toMatch(/^Bearer/);
      }
      // The permissions claim cannot grant what it does not hold either.
      expectForbidden(await callWith(route, { permissions: others }));
      void label;
    },
  );

  it.each(scoped.map((r) => [`${r[0]} ${r[1]()}`, r[2], r] as const))(
    '%s is allowed with %s in the scope claim',
    async (label, required, route) => {
      expectAllowed(await callWith(route, { scope: required as string }), label);
      expectAllowed(await callWith(route, { scope: `openid ${required} email` }), label);
    },
  );

  it.each(scoped.map((r) => [`${r[0]} ${r[1]()}`, r[2], r] as const))(
    '%s is allowed with %s in the permissions claim',
    async (label, required, route) => {
      expectAllowed(await callWith(route, { permissions: [required] }), label);
      expectAllowed(await callWith(route, { scope: 'openid', permissions: ['x', required] }), label);
    },
  );

  it.each(
    scoped
      .filter((r) => (r[2] as string).endsWith(':view'))
      .map((r) => [`${r[0]} ${r[1]()}`, (r[2] as string).replace(/:view$/, ':manage'), r] as const),
  )('%s is allowed with %s (manage includes view)', async (label, manageScope, route) => {
    expectAllowed(await callWith(route, { scope: manageScope }), label);
    expectAllowed(await callWith(route, { permissions: [manageScope] }), label);
  });

  it.each(open.map((r) => [`${r[0]} ${r[1]()}`, r] as const))(
    '%s needs a valid token but no scope',
    async (label, route) => {
      expectAllowed(await callWith(route, { scope: undefined }), label);
      expectAllowed(await callWith(route, { scope: 'openid' }), label);
      const [method, url, , body] = route;
      expectUnauthorized(await t.call(method, url(), { body: body?.() }));
    },
  );

  it.each(routes.map((r) => [`${r[0]} ${r[1]()}`, r] as const))('%s is 401 without a token', async (_label, route) => {
    const [method, url, , body] = route;
    expectUnauthorized(await t.call(method, url(), { body: body?.() }));
  });

  it('does not read a scope out of a longer or shorter name', async () => {
    for (const scope of ['user:content:views', 'user:content', 'user:content:view:extra', 'USER:CONTENT:VIEW', 'admin:user:content:view']) {
      expectForbidden(await callWith(routes[0] as Route, { scope }));
    }
    for (const scope of ['administrator', 'Admin', 'admins']) {
      expectForbidden(await callWith(routes.find((r) => r[2] === 'admin') as Route, { scope }));
    }
  });

  it('does not let view scopes write', async () => {
    const sub = newUser('viewer');
    const r = await t.call('POST', '/content', { token: await t.token(sub, 'user:content:view'), body: cardBody() });
    expectForbidden(r);
    expect(await cardCount(sub)).toBe(0);
  });

  it('does not let the admin scope act as a user scope', async () => {
    const sub = newUser('admin-only');
    expectForbidden(await t.call('GET', '/content/mine', { token: await t.token(sub, 'admin') }));
    expectForbidden(await t.call('POST', '/content', { token: await t.token(sub, 'admin'), body: cardBody() }));
    expect(await cardCount(sub)).toBe(0);
  });

  it('does not let a non-admin create catalogue cards', async () => {
    const id = newCardId();
    const r = await t.call('PUT', `/admin/cards/${id}`, {
      token: await t.token(newUser('user'), 'user:content:manage family:library:manage'),
      body: catalogueCard('Sneaky', 'free'),
    });
    expectForbidden(r);
    const read = await t.call('GET', `/card/${id}`, { token: await t.token(newUser('reader'), '') });
    expect(read.status).toBe(404);
    // With the admin scope it works, which shows the id was valid.
    await putCatalogueCard(t, 'free', { cardId: id, title: 'Real' });
    expectStatus(await t.call('GET', `/card/${id}`, { token: await t.token(newUser('reader'), '') }), 200);
  });
});

describe('GET /.well-known/jwks.json', () => {
  it('publishes the public key that verifies the tokens, without its private part', async () => {
    const r = expectStatus(await t.call('GET', '/.well-known/jwks.json'), 200);
    expect(String(r.headers['content-type'])).toMatch(/^application\/json/);
    expect(Array.isArray(r.body.keys)).toBe(true);
    expect(r.body.keys.length).toBeGreaterThan(0);
    for (const jwk of r.body.keys) {
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(jwk).not.toHaveProperty(secret);
    }
    const jwks = createLocalJWKSet(r.body);
    const sub = newUser('jwks');
    const token = await t.token(sub, 'user:content:view');
    const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer, audience });
    expect(payload.sub).toBe(sub);
    expect(payload.scope).toBe('user:content:view');
    expect(r.body.keys.map((k: { kid?: string }) => k.kid)).toContain(protectedHeader.kid);
  });

  it('does not verify a token of another key', async () => {
    const r = expectStatus(await t.call('GET', '/.well-known/jwks.json'), 200);
    const other = await generateKeyPair(LOCAL_ALG, { crv: 'Ed25519', extractable: true });
    const otherJwk = await exportJWK(other.publicKey);
    expect(r.body.keys.map((k: { x?: string }) => k.x)).not.toContain(otherJwk.x);
    const forged = await new SignJWT({ sub: 'auth0|forged' })
      .setProtectedHeader({ alg: LOCAL_ALG, kid: r.body.keys[0].kid })
      .setIssuer(issuer)
      .setAudience(audience)
      .setExpirationTime('1h')
      .sign(other.privateKey);
    await expect(jwtVerify(forged, createLocalJWKSet(r.body), { issuer, audience })).rejects.toThrow();
  });

  it('needs no token', async () => {
    const r = await t.call('GET', '/.well-known/jwks.json', { headers: { authorization: 'Bearer garbage' } });
    expect(r.status).toBe(200);
  });

  it('is the key the local issuer signs with (a token the server accepts verifies against it)', async () => {
    const sub = newUser('roundtrip');
    const token = await t.token(sub, 'user:content:view');
    expectStatus(await t.call('GET', '/content/mine', { token }), 200);
    const r = expectStatus(await t.call('GET', '/.well-known/jwks.json'), 200);
    const { payload } = await jwtVerify(token, createLocalJWKSet(r.body));
    expect(payload.sub).toBe(sub);
    expect(payload.iss).toBe(issuer);
    expect(payload.aud).toBe(audience);
  });
});

describe('freshly minted tokens', () => {
  it('expire: a token of 1 second is refused once it is over', async () => {
    const clock = controlledClock();
    const sub = newUser('short');
    const token = await t.token(sub, 'user:content:view', '1s');
    expectStatus(await t.call('GET', '/content/mine', { token }), 200);
    clock.tick(2100);
    expectUnauthorized(await t.call('GET', '/content/mine', { token }));
  });

  it('serve a free catalogue card to any signed-in user', async () => {
    const id = await putCatalogueCard(t, 'free');
    const r = await t.call('GET', `/card/${id}`, { token: await t.token(newUser('anyone'), '') });
    expect(expectStatus(r, 200).body.card.cardId).toBe(id);
  });
});
