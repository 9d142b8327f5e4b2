import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadOrCreateSigningKey, mintToken } from '../../src/auth/local-issuer.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Store } from '../../src/db/dialect.js';
import { openStore } from '../../src/db/store.js';
import type { App } from '../../src/http/route-app.js';
import { ALL_USER_SCOPES, cardBody } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/**
 * How many statements each read route sends to the database, counted where the driver runs
 * them (StoreDialect.watchStatements): a fixed number per route, so that a query added to a
 * common read fails here, in CI, instead of going unnoticed until a benchmark. When a change
 * needs another statement on purpose, change the number here and say why in the commit.
 *
 * The numbers are those of both stores: the reads take no locks and open no transactions.
 * They are counted twice: with the answer cache off (ANSWER_CACHE_MB=0), where every 200 reads
 * and renders its answer, and on (the default), where a read that finds its tag unchanged sends
 * the bytes kept under it (src/http/answer-cache.ts): as many statements as a 304.
 */
const READS: { name: string; url: (f: Fixture) => string; statements: number; notModified: number; kept?: false }[] = [
  // The list and its tag in one statement; a revalidation reads the change counter alone.
  { name: 'GET /content/mine', url: () => '/content/mine', statements: 1, notModified: 1 },
  { name: 'GET /content/mine?showdeleted=true', url: () => '/content/mine?showdeleted=true', statements: 1, notModified: 1 },
  { name: 'GET /card/{cardId} (own card)', url: (f) => `/card/${f.cardId}`, statements: 1, notModified: 1 },
  // A signed read also reads who may read the media its card names (issue 17, row 3).
  // Signed answers are never kept: their rendering reads the media rights again.
  { name: 'GET /card/{cardId}?playable=true', url: (f) => `/card/${f.cardId}?playable=true`, statements: 2, notModified: 1, kept: false },
  { name: 'GET /card/{cardId} (a card of the family library)', url: (f) => `/card/${f.catalogueCardId}`, statements: 1, notModified: 1 },
  { name: 'GET /user/family', url: () => '/user/family', statements: 3, notModified: 1 },
  { name: 'GET /card/family/library', url: () => '/card/family/library', statements: 2, notModified: 1 },
  { name: 'GET /card/family/library/groups', url: () => '/card/family/library/groups', statements: 3, notModified: 1 },
  { name: 'GET /card/family/library/groups/{groupId}', url: (f) => `/card/family/library/groups/${f.groupId}`, statements: 2, notModified: 1 },
  { name: 'GET /wishlists', url: () => '/wishlists', statements: 2, notModified: 1, kept: false },
  { name: 'GET /wishlists/{wishlistId}', url: (f) => `/wishlists/${f.wishlistId}`, statements: 2, notModified: 1, kept: false },
  { name: 'GET /wishlists?format=raw', url: () => '/wishlists?format=raw', statements: 2, notModified: 1 },
];

/**
 * Statements a write runs, besides `begin`, `commit` and the locks of its unit of work (on
 * SQLite `begin immediate` is the lock: no statement): a fixed number per route, as for the
 * reads. The last two of each are the counters' bump (one statement however many) and the live
 * event.
 *
 * And on PostgreSQL its round trips, `begin` and `commit` included: statements that do not wait
 * for each other go out together (db/guarded-driver.ts). The common writes make three: the
 * `begin` with the locks and the reads (or the first write), the writes, the event with the
 * `commit`; a group write reads the caller's family first, outside the unit, since its lock
 * names the family, and its writes all go with the commit. A library add makes three too: the
 * card with the family and its record (one statement) read with the `begin`; the insert, its
 * history, the bump and the counters the event's tag names, sent together; the event with the
 * commit. A repeated add is answered from the read: two round trips, `begin` and `commit` (on
 * SQLite the read runs before any transaction, which would take the write lock).
 */
const WRITES: { name: string; method: 'POST' | 'PUT'; url: (f: Fixture) => string; body: (f: Fixture) => object; statements: number; roundTrips: number }[] = [
  // The card, the owner's family, the bump, the event.
  { name: 'POST /content (create)', method: 'POST', url: () => '/content', body: () => cardBody('Counted'), statements: 4, roundTrips: 3 },
  // And the card's row read first (its owner, its version for If-Match).
  { name: 'POST /content (update)', method: 'POST', url: () => '/content', body: (f) => ({ cardId: f.cardId, title: 'Counted again' }), statements: 5, roundTrips: 3 },
  // The family, the count of its groups, the items' cards, the group, its history, the bump, the counters the tag shows, the event.
  { name: 'POST /card/family/library/groups', method: 'POST', url: () => '/card/family/library/groups', body: (f) => ({ name: 'Counted', imageId: 'moon', items: [{ contentId: f.catalogueCardId }] }), statements: 8, roundTrips: 3 },
  // The family, the group, its tag's counters, the items' cards, the update, its history, the bump, the event.
  { name: 'PUT /card/family/library/groups/{groupId}', method: 'PUT', url: (f) => `/card/family/library/groups/${f.groupId}`, body: (f) => ({ name: 'Renamed', imageId: 'moon', items: [{ contentId: f.catalogueCardId }] }), statements: 8, roundTrips: 3 },
  // The count of the user's lists, the insert, the bump, the event.
  { name: 'POST /wishlists', method: 'POST', url: () => '/wishlists', body: (f) => ({ content: [{ item: f.catalogueCardId }] }), statements: 4, roundTrips: 3 },
  // The list (for If-Match), the update, the bump, the event.
  { name: 'PUT /wishlists/{wishlistId}', method: 'PUT', url: (f) => `/wishlists/${f.wishlistId}`, body: (f) => ({ content: [{ item: f.cardId }] }), statements: 4, roundTrips: 3 },
  // The card, and the caller's family with its record (not there yet) side by side; the insert; its history, the bump, the counters the tag shows, the event.
  { name: 'POST /card/family/library', method: 'POST', url: () => '/card/family/library', body: (f) => ({ cardId: f.addableCardId }), statements: 6, roundTrips: 3 },
  // The card, and the family with its record (there): answered from them, no transaction.
  { name: 'POST /card/family/library (held already)', method: 'POST', url: () => '/card/family/library', body: (f) => ({ cardId: f.catalogueCardId }), statements: 1, roundTrips: 2 },
];

interface Fixture {
  cardId: string;
  /** A catalogue card no library holds yet. */
  addableCardId: string;
  catalogueCardId: string;
  groupId: string;
  wishlistId: string;
}

describe.each([
  { cache: 'off', env: { ANSWER_CACHE_MB: '0' } },
  { cache: 'on', env: {} },
])('statements per read route, answer cache $cache', ({ cache, env }) => {
  let database: TestDatabase;
  let dataDir: string;
  let store: Store;
  let app: App;
  let token: string;
  let fixture: Fixture;
  /** The SQL of every statement run since the last reset. */
  const seen: string[] = [];
  /** Of those, the ones that went out with none other on the way: a round trip each. */
  const trips: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(tmpdir(), 'cardshelf-statements-'));
    // The revocation list's poll (src/auth/revocations.ts) runs beside the requests, not in them:
    // a minute apart, it does not land among a request's statements.
    const config: Readonly<Config> = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', TOKEN_REVOCATION_POLL_MS: '60000', ...database.env, ...env });
    store = openStore(config.database);
    store.dialect.watchStatements((query, _seconds, roundTrip) => {
      // The transcode queue's, the link jobs' and the link sign-ins' polls (every few seconds,
      // beside the requests: a look for work, then its claim) are no request's.
      if (/^\s*(update (transcodes|link_jobs)\b|select 1 as one from (transcodes|link_jobs) c\b|select \* from "links" where "state" = )/.test(query.sql)) return;
      seen.push(query.sql);
      if (roundTrip) trips.push(query.sql);
    });
    app = await buildApp(config, { store });
    await app.ready();
    if (config.auth.mode !== 'local') throw new Error('the test mints tokens with the local issuer');
    const key = await loadOrCreateSigningKey(config.auth.keyFile);
    const mint = (sub: string, scope: string): Promise<string> =>
      mintToken(key, { sub, scope, expiresIn: '1h', issuer: config.auth.issuer, audience: config.auth.audience });
    const admin = await mint('auth0|admin', 'admin');
    token = await mint('auth0|reader', ALL_USER_SCOPES);

    const call = async (method: string, url: string, as: string, body?: unknown): Promise<any> => {
      const r = await app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${as}` }, payload: body as object });
      if (r.statusCode >= 300) throw new Error(`${method} ${url}: ${r.statusCode} ${r.body}`);
      return r.json();
    };
    await call('PUT', '/admin/families/stmt-family', admin, {
      country: 'GB',
      flags: { sharingOn: true },
      members: [{ userId: 'auth0|reader', approved: true, verified: true, verifiedEmail: 'reader@example.com' }],
      devices: [{ deviceId: 'stmt-device' }],
    });
    const catalogueCardId = 'StmtC';
    await call('PUT', `/admin/cards/${catalogueCardId}`, admin, { ...cardBody('Catalogue'), userId: 'cardshelf|catalogue', availability: 'free' });
    await call('PUT', '/admin/cards/StmtD', admin, { ...cardBody('Addable'), userId: 'cardshelf|catalogue', availability: 'free' });
    const card = await call('POST', '/content', token, cardBody('Mine'));
    await call('POST', '/content', token, cardBody('Mine too'));
    await call('POST', '/card/family/library', token, { cardId: catalogueCardId });
    const group = await call('POST', '/card/family/library/groups', token, {
      name: 'Group',
      imageId: 'moon',
      items: [{ contentId: catalogueCardId }, { contentId: card.card.cardId }],
    });
    const wishlist = await call('POST', '/wishlists', token, { content: [{ item: catalogueCardId }] });
    fixture = { cardId: card.card.cardId, addableCardId: 'StmtD', catalogueCardId, groupId: group.id, wishlistId: wishlist.wishlistId };
  });

  afterAll(async () => {
    await app?.close();
    await store?.db.destroy();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** The statements one request runs, and its answer. */
  async function counted(url: string, headers: Record<string, string> = {}): Promise<{ status: number; etag: string; body: string; statements: string[] }> {
    seen.length = 0;
    const r = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}`, ...headers } });
    return { status: r.statusCode, etag: String(r.headers.etag ?? ''), body: r.body, statements: [...seen] };
  }

  if (cache === 'on') {
    for (const write of WRITES) {
      it(`${write.name}: ${write.statements} statement(s) besides its transaction and locks; ${write.roundTrips} round trips on PostgreSQL`, async () => {
        seen.length = 0;
        trips.length = 0;
        const r = await app.inject({ method: write.method, url: write.url(fixture), headers: { authorization: `Bearer ${token}` }, payload: write.body(fixture) });
        expect(r.statusCode, r.body).toBeLessThan(300);
        const statements = seen.filter((sql) => !/^select pg_advisory_xact_lock\(/.test(sql) && !/^(begin|commit)\b/i.test(sql));
        expect(statements, statements.join('\n')).toHaveLength(write.statements);
        if (store.dialect.pipelined) expect(trips, `round trips, each by its first statement:\n${trips.join('\n')}`).toHaveLength(write.roundTrips);
      });
    }
  }

  for (const read of READS) {
    const statements = cache === 'on' && read.kept !== false ? read.notModified : read.statements;
    it(`${read.name}: ${statements} statement(s), ${read.notModified} for a 304`, async () => {
      const url = read.url(fixture);
      // Twice: the first request of a route may prepare or warm what later ones reuse.
      const first = await counted(url);
      const ok = await counted(url);
      expect(ok.status).toBe(200);
      expect(ok.statements, ok.statements.join('\n')).toHaveLength(statements);
      expect(ok.body).toBe(first.body);
      const hit = await counted(url, { 'if-none-match': ok.etag });
      expect(hit.status).toBe(304);
      expect(hit.statements, hit.statements.join('\n')).toHaveLength(read.notModified);
    });
  }
});
