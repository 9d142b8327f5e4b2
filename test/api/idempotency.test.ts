import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/store.js';
import type { Store } from '../../src/db/dialect.js';
import { userLock } from '../../src/db/unit-of-work.js';
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, sweep } from '../../src/http/idempotency.js';
import { cardBody, errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import { MANAGE, expectStatus, familyOf, newUser, putCatalogueCard } from '../support/fixtures.js';

/**
 * Idempotency-Key on the POSTs that create (issue 12): a retried request answers the first
 * answer without running again; another request with the key is a 422; a request while the
 * first still runs is a 409. Keys are the user's, kept in the database.
 */

/**
 * A request sent with this header stops once its handler has answered, before its answer goes
 * out, as an instance dying there would: the test hears when it got there, and lets it go on.
 */
const STOP_BEFORE_ANSWER = 'x-test-stop-before-answer';
let stopping: { reached: () => void; resumed: Promise<void> } | undefined;

function stopBeforeAnswer(): { reached: Promise<void>; resume: () => void } {
  let resume!: () => void;
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  const reached = new Promise<void>((resolve) => (stopping = { reached: resolve, resumed }));
  return { reached, resume };
}

let t: TestApp;
let store: Store;
beforeAll(async () => {
  // A short statement timeout: the test of a failed first request waits for one.
  t = await startTestApp(
    { DATABASE_STATEMENT_TIMEOUT_MS: '1000' },
    {
      // An app-wide hook: it runs before the idempotent routes' own (which store answers).
      prepare: (app) =>
        app.addHook('onSend', async (request, _reply, payload) => {
          if (request.headers[STOP_BEFORE_ANSWER] && stopping) {
            stopping.reached();
            await stopping.resumed;
          }
          return payload;
        }),
    },
  );
  // The app's own database, opened beside it to look at (and age) stored keys.
  store = openStore(t.config.database);
});
afterAll(async () => {
  await store.db.destroy();
  await t.close();
});

const ALL = 'user:content:manage family:library:manage';
let keys = 0;
const newKey = (): string => `key-${process.pid}-${++keys}-${'x'.repeat(8)}`;

async function post(user: string, url: string, body: unknown, key?: string, headers: Record<string, string> = {}): Promise<Reply> {
  return t.call('POST', url, {
    token: await t.token(user, ALL),
    body,
    headers: key === undefined ? headers : { ...headers, 'idempotency-key': key },
  });
}

async function wishlistCount(user: string): Promise<number> {
  const r = expectStatus(await t.call('GET', '/wishlists?format=raw', { token: await t.token(user, ALL) }), 200);
  return (r.body.wishlists as unknown[]).length;
}

describe('a retried POST with the same key and body', () => {
  it.each([
    ['POST /wishlists', '/wishlists', () => ({ content: [{ item: 'abcde' }] })],
    ['POST /content (create)', '/content', () => cardBody('Retried card')],
    ['POST /card/family/library/groups', '/card/family/library/groups', () => ({ name: 'Retried', imageId: 'img', items: [] })],
  ])('%s answers the first answer again, marked, and creates nothing more', async (_what, url, body) => {
    const user = newUser('retrier');
    const key = newKey();
    const first = expectStatus(await post(user, url, body(), key), 201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    for (let i = 0; i < 3; i++) {
      const again = await post(user, url, body(), key);
      expect(again.status).toBe(201);
      expect(again.raw.body).toBe(first.raw.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.headers['content-type']).toBe(first.headers['content-type']);
    }
    // One object, as the lists show.
    const list = {
      '/wishlists': ['/wishlists?format=raw', (b: any) => b.wishlists],
      '/content': ['/content/mine', (b: any) => b.cards],
      '/card/family/library/groups': ['/card/family/library/groups', (b: any) => b],
    }[url]!;
    const listed = expectStatus(await t.call('GET', list[0] as string, { token: await t.token(user, ALL) }), 200);
    expect((list[1] as (b: unknown) => unknown[])(listed.body)).toHaveLength(1);
    // Without the key, the same body creates another.
    expectStatus(await post(user, url, body()), 201);
  });

  it('POST /card/family/library replays its 201, though a new add would answer 200', async () => {
    const user = newUser('adder');
    await familyOf(t, [user]);
    const cardId = await putCatalogueCard(t, 'free');
    const key = newKey();
    const first = expectStatus(await t.call('POST', '/card/family/library', { token: await t.token(user, MANAGE), body: { cardId }, headers: { 'idempotency-key': key } }), 201);
    const again = await t.call('POST', '/card/family/library', { token: await t.token(user, MANAGE), body: { cardId }, headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expectStatus(await t.call('POST', '/card/family/library', { token: await t.token(user, MANAGE), body: { cardId } }), 200);
  });

  it('takes the draft\'s quoted form of the key as the same key', async () => {
    const user = newUser('quoted');
    const key = newKey();
    expectStatus(await post(user, '/wishlists', { content: [] }, key), 201);
    const again = await post(user, '/wishlists', { content: [] }, `"${key}"`);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await wishlistCount(user)).toBe(1);
  });

  it('replays a 4xx the first request got (the limit), even once the limit would let it through', async () => {
    const user = newUser('limited');
    for (let i = 0; i < 10; i++) expectStatus(await post(user, '/wishlists', { content: [] }), 201);
    const key = newKey();
    const refused = await post(user, '/wishlists', { content: [{ item: 'eleventh' }] }, key);
    expect(refused.status).toBe(400);
    expect(errorCode(refused)).toBe('wishlist-limit');
    const { wishlists } = (await t.call('GET', '/wishlists?format=raw', { token: await t.token(user, ALL) })).body;
    expectStatus(await t.call('DELETE', `/wishlists/${wishlists[0].wishlistId}`, { token: await t.token(user, ALL) }), 200);
    const again = await post(user, '/wishlists', { content: [{ item: 'eleventh' }] }, key);
    expect(again.status).toBe(400);
    expect(errorCode(again)).toBe('wishlist-limit');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await wishlistCount(user)).toBe(9);
  });

  it('does not keep a request refused before it ran (validation): the key is still free', async () => {
    const user = newUser('invalid-first');
    const key = newKey();
    const bad = await post(user, '/wishlists', { content: 'not an array' }, key);
    expect(bad.status).toBe(400);
    const good = await post(user, '/wishlists', { content: [] }, key);
    expect(good.status).toBe(201);
    expect(good.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('the same key for another request', () => {
  it.each([
    ['another body', '/wishlists', { content: [{ item: 'other' }] }],
    ['another path', '/content', cardBody('Not a wishlist')],
    ['another query', '/wishlists?format=raw', { content: [{ item: 'first' }] }],
  ])('with %s is a 422, and runs nothing', async (_what, url, body) => {
    const user = newUser('reuser');
    const key = newKey();
    expectStatus(await post(user, '/wishlists', { content: [{ item: 'first' }] }, key), 201);
    const r = await post(user, url, body, key);
    expect(r.status).toBe(422);
    expect(errorCode(r)).toBe('idempotency-key-reused');
    expect(await wishlistCount(user)).toBe(1);
    const cards = (await t.call('GET', '/content/mine', { token: await t.token(user, ALL) })).body.cards;
    expect(cards).toHaveLength(0);
  });

  it('of another user is their own key', async () => {
    const key = newKey();
    const [a, b] = [newUser('key-a'), newUser('key-b')];
    const first = expectStatus(await post(a, '/wishlists', { content: [] }, key), 201);
    const other = expectStatus(await post(b, '/wishlists', { content: [] }, key), 201);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(other.body.wishlistId).not.toBe(first.body.wishlistId);
    expect(other.body.userId).toBe(b);
  });
});

describe('malformed keys', () => {
  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space inside', 'two words'],
    ['a comma', 'a,b'],
    ['non-ASCII', 'clé'],
    ['an empty quoted string', '""'],
  ])('%s: 400 bad-request, nothing created', async (_what, key) => {
    const user = newUser('malformed');
    const r = await post(user, '/wishlists', { content: [] }, key);
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
    expect(r.body.error.message).toContain('Idempotency-Key');
    expect(await wishlistCount(user)).toBe(0);
  });

  it('takes 255 characters of the allowed ones', async () => {
    const user = newUser('long-key');
    const key = `${'aZ09-_.:~+/='.repeat(21)}abc`;
    expect(key).toHaveLength(255);
    expectStatus(await post(user, '/wishlists', { content: [] }, key), 201);
    expect((await post(user, '/wishlists', { content: [] }, key)).headers['idempotent-replayed']).toBe('true');
  });
});

describe('keys in flight, abandoned and expired', () => {
  async function age(user: string, key: string, fields: { created_at?: string; claimed_at?: string; state?: 'in-flight' | 'done' }): Promise<void> {
    await store.db.updateTable('idempotency_keys').set(fields).where('user_id', '=', user).where('idempotency_key', '=', key).execute();
  }

  it('20 identical requests at once create one wishlist; the others replay it or are told to retry (409)', async () => {
    const user = newUser('burst');
    const key = newKey();
    const replies = await Promise.all(Array.from({ length: 20 }, () => post(user, '/wishlists', { content: [{ item: 'once' }] }, key)));
    const created = replies.filter((r) => r.status === 201);
    const busy = replies.filter((r) => r.status === 409);
    expect(created.length + busy.length).toBe(20);
    expect(created.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(new Set(created.map((r) => r.body.wishlistId)).size).toBe(1);
    for (const r of busy) {
      expect(errorCode(r)).toBe('idempotency-key-in-use');
      expect(r.headers['retry-after']).toBe('1');
    }
    expect(await wishlistCount(user)).toBe(1);
  });

  it('a key whose first request is still running answers 409 in-use', async () => {
    const user = newUser('in-flight');
    const key = newKey();
    expectStatus(await post(user, '/wishlists', { content: [] }, key), 201);
    // As if the first request had claimed the key a moment ago and not answered yet.
    await age(user, key, { state: 'in-flight', claimed_at: new Date().toISOString() });
    const r = await post(user, '/wishlists', { content: [] }, key);
    expect(r.status).toBe(409);
    expect(errorCode(r)).toBe('idempotency-key-in-use');
    expect(await wishlistCount(user)).toBe(1);
  });

  it('a key whose first request never answered (its instance died) is taken over after the lease', async () => {
    const user = newUser('abandoned');
    const key = newKey();
    expectStatus(await post(user, '/wishlists', { content: [] }, key), 201);
    await age(user, key, { state: 'in-flight', claimed_at: new Date(Date.now() - IDEMPOTENCY_LEASE_MS - 1000).toISOString() });
    const r = await post(user, '/wishlists', { content: [] }, key);
    expect(r.status).toBe(201);
    expect(r.headers['idempotent-replayed']).toBeUndefined();
    expect(await wishlistCount(user)).toBe(2);
  });

  it('a key older than 24 hours is a new key, and the sweep removes it', async () => {
    const user = newUser('expired');
    const key = newKey();
    const first = expectStatus(await post(user, '/wishlists', { content: [] }, key), 201);
    const old = new Date(Date.now() - IDEMPOTENCY_TTL_MS - 1000).toISOString();
    await age(user, key, { created_at: old, claimed_at: old });
    const again = expectStatus(await post(user, '/wishlists', { content: [{ item: 'other body: fine' }] }, key), 201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.wishlistId).not.toBe(first.body.wishlistId);

    const stale = newKey();
    expectStatus(await post(user, '/wishlists', { content: [] }, stale), 201);
    await age(user, stale, { created_at: old, claimed_at: old });
    const removed = await sweep(store, pino({ level: 'silent' }));
    expect(removed).toBeGreaterThanOrEqual(1);
    const left = await store.db.selectFrom('idempotency_keys').select('idempotency_key').where('user_id', '=', user).execute();
    expect(left.map((r) => r.idempotency_key)).toEqual([key]);
  });

  // PostgreSQL: the user's lock, held from another connection, makes the create time out (503)
  // after it claimed its key. (On SQLite the claim itself would wait for the same write lock.)
  it.runIf(process.env.CARDSHELF_TEST_DB === 'postgres')(
    'a first request the server failed (5xx) gave its key back: the retry runs, and creates once',
    async () => {
      const user = newUser('failed-first');
      const key = newKey();
      let release!: () => void;
      let locked!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const taken = new Promise<void>((resolve) => (locked = resolve));
      const holder = store.db.transaction().execute(async (trx) => {
        await store.dialect.lockKey(trx, userLock(user).key);
        locked();
        await held;
      });
      await taken;
      try {
        const failed = await post(user, '/wishlists', { content: [] }, key);
        expect(failed.status).toBe(503);
        expect(errorCode(failed)).toBe('unavailable');
      } finally {
        release();
        await holder;
      }
      const left = await store.db.selectFrom('idempotency_keys').select('state').where('user_id', '=', user).execute();
      expect(left).toEqual([]);
      const retry = expectStatus(await post(user, '/wishlists', { content: [] }, key), 201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await wishlistCount(user)).toBe(1);
    },
  );
});

describe('the stored answer commits with the write it replays (issue 17)', () => {
  const listed = async (user: string, url: string): Promise<unknown[]> =>
    expectStatus(await t.call('GET', url, { token: await t.token(user, ALL) }), 200).body;

  const cases: [string, string, (user: string) => Promise<{ body: unknown; count: () => Promise<number> }>][] = [
    ['POST /wishlists', '/wishlists', async (user) => ({ body: { content: [{ item: 'once' }] }, count: () => wishlistCount(user) })],
    [
      'POST /content',
      '/content',
      async (user) => ({
        body: cardBody('Created once'),
        count: async () => ((await listed(user, '/content/mine')) as unknown as { cards: unknown[] }).cards.length,
      }),
    ],
    [
      'POST /card/family/library/groups',
      '/card/family/library/groups',
      async (user) => ({
        body: { name: 'Once', imageId: 'img', items: [] },
        count: async () => (await listed(user, '/card/family/library/groups')).length,
      }),
    ],
    [
      'POST /card/family/library',
      '/card/family/library',
      async (user) => {
        await familyOf(t, [user]);
        const cardId = await putCatalogueCard(t, 'free');
        return {
          body: { cardId },
          count: async () => {
            const { cards } = (await listed(user, '/card/family/library')) as unknown as { cards: { inFamilyLibrary: boolean }[] };
            return cards.filter((c) => c.inFamilyLibrary).length;
          },
        };
      },
    ],
  ];

  it.each(cases)(
    '%s: an instance dying between the write and its answer leaves the answer stored; a retry replays it and creates nothing more',
    async (_what, url, setUp) => {
      const user = newUser('dies');
      const { body, count } = await setUp(user);
      const key = newKey();
      const stopped = stopBeforeAnswer();
      const dying = post(user, url, body, key, { [STOP_BEFORE_ANSWER]: '1' });
      await stopped.reached;
      let retry: Reply;
      try {
        expect(await count()).toBe(1);
        const stored = await store.db.selectFrom('idempotency_keys').selectAll().where('user_id', '=', user).executeTakeFirstOrThrow();
        // The lease of a request that never answered is over: a retry may run again.
        const stale = new Date(Date.now() - IDEMPOTENCY_LEASE_MS - 1000).toISOString();
        await store.db.updateTable('idempotency_keys').set({ claimed_at: stale }).where('user_id', '=', user).execute();
        retry = await post(user, url, body, key);
        expect(retry.status).toBe(201);
        expect(await count()).toBe(1);
        expect(retry.headers['idempotent-replayed']).toBe('true');
        // Because the key was done, with the answer, as soon as the write was: never one without the other.
        expect(stored.state).toBe('done');
        expect(stored.status).toBe(201);
      } finally {
        stopped.resume();
      }
      // What the dying request would have answered is what the retry got.
      const late = expectStatus(await dying, 201);
      expect(retry.raw.body).toBe(late.raw.body);
      expect(await count()).toBe(1);
    },
  );

  // PostgreSQL: the user's lock, held from another connection, keeps the create waiting (on
  // SQLite the claim itself would wait for the same write lock) while its key is taken over.
  it.runIf(process.env.CARDSHELF_TEST_DB === 'postgres')(
    'a create whose key was taken over while it waited (its lease ran out) is undone: 409, nothing created',
    async () => {
      const user = newUser('overtaken');
      const key = newKey();
      let release!: () => void;
      let locked!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const taken = new Promise<void>((resolve) => (locked = resolve));
      const holder = store.db.transaction().execute(async (trx) => {
        await store.dialect.lockKey(trx, userLock(user).key);
        locked();
        await held;
      });
      await taken;
      let late: Promise<Reply>;
      try {
        late = post(user, '/wishlists', { content: [] }, key);
        // The claim is made before the create waits for the lock; another request takes it over.
        await expect.poll(async () => (await store.db.selectFrom('idempotency_keys').select('state').where('user_id', '=', user).execute()).length).toBe(1);
        const other = new Date(Date.now() + 1000).toISOString();
        await store.db.updateTable('idempotency_keys').set({ claimed_at: other }).where('user_id', '=', user).execute();
      } finally {
        release();
        await holder;
      }
      const r = await late;
      expect(r.status).toBe(409);
      expect(errorCode(r)).toBe('idempotency-key-in-use');
      expect(await wishlistCount(user)).toBe(0);
      // The key is still the other request's: in flight, without this one's answer.
      const row = await store.db.selectFrom('idempotency_keys').selectAll().where('user_id', '=', user).executeTakeFirstOrThrow();
      expect(row.state).toBe('in-flight');
      expect(row.body).toBeNull();
    },
  );
});
