import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody } from '../support/test-app.js';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { http, startServer, type HttpReply, type ServerProcess } from '../support/processes.js';
import { MIGRATION_NAMES } from '../../src/db/migrate.js';
import { testDialect } from '../support/test-database.js';

/**
 * The limits and uniqueness rules hold when the requests race on different instances: two real
 * `cardshelf serve` processes on one database (PostgreSQL, or one SQLite file), with requests
 * sent to both at once. `inject` cannot show this: one process serialises what two do not.
 */
const FREE_CARDS = ['Free1', 'Free2', 'Free3', 'Free4'];

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** How many replies had each outcome, e.g. {"201": 10, "400 wishlist-limit": 40}. */
function outcomes(replies: HttpReply[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of replies) {
    const key = r.status >= 400 ? `${r.status} ${r.body?.error?.code ?? JSON.stringify(r.body).slice(0, 80)}` : `${r.status}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe(`two server processes on one ${testDialect()} database`, () => {
  let deployment: Deployment;
  let servers: ServerProcess[] = [];
  let admin: string;
  /** Request i goes to server i mod 2: every burst is split evenly over both. */
  const on = (i: number): string => servers[i % servers.length]!.url;

  async function putFamily(familyId: string, members: string[]): Promise<void> {
    const r = await http(on(0), 'PUT', `/admin/families/${familyId}`, {
      token: admin,
      body: { country: 'US', members: members.map((userId) => ({ userId, approved: true })) },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }

  async function count(table: 'wishlists' | 'library_records' | 'library_groups', column: string, value: string): Promise<number> {
    const { db } = deployment.store();
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where(sql.ref(column), '=', value)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  beforeAll(async () => {
    deployment = await createDeployment();
    // Started at the same moment on an empty database: both run the serve-time migration.
    servers = await Promise.all([startServer(deployment.env), startServer(deployment.env)]);
    admin = await deployment.token('auth0|operator', 'admin');
    for (const [i, cardId] of FREE_CARDS.entries()) {
      const body = cardBody(`Free card ${cardId}`, { userId: 'auth0|store', availability: 'free', clubAvailability: [] });
      const r = await http(on(i), 'PUT', `/admin/cards/${cardId}`, { token: admin, body });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL', 0)));
    await deployment?.close();
  });

  it('migrated the schema once, though both instances started together', async () => {
    const { db } = deployment.store();
    const rows = await db.selectFrom(sql.table('kysely_migration').as('m')).select(sql.ref<string>('name').as('name')).execute();
    expect(rows.map((r) => r.name)).toEqual(MIGRATION_NAMES);
  });

  it('50 simultaneous wishlist creates of one user: exactly 10 x 201, 40 x 400 wishlist-limit, 10 stored', async () => {
    const user = 'auth0|race-wisher';
    const token = await deployment.token(user);
    const replies = await Promise.all(
      range(50).map((i) => http(on(i), 'POST', '/wishlists', { token, body: { content: [{ item: 'Free1', n: i }] } })),
    );
    expect(outcomes(replies)).toEqual({ '201': 10, '400 wishlist-limit': 40 });
    expect(await count('wishlists', 'user_id', user)).toBe(10);
    const created = replies.filter((r) => r.status === 201).map((r) => r.body.wishlistId as string).sort();
    for (const s of servers) {
      const list = await http(s.url, 'GET', '/wishlists', { token });
      expect(list.body.wishlists.map((w: { wishlistId: string }) => w.wishlistId).sort()).toEqual(created);
    }
  });

  it('50 simultaneous adds of one free card to one family library: one 201, 49 x 200, one record', async () => {
    const familyId = 'race-library';
    const members = ['auth0|race-lib-a', 'auth0|race-lib-b'];
    await putFamily(familyId, members);
    const tokens = await Promise.all(members.map((m) => deployment.token(m)));
    // Both members, on both instances.
    const replies = await Promise.all(
      range(50).map((i) =>
        http(on(i), 'POST', '/card/family/library', { token: tokens[Math.floor(i / 2) % 2], body: { cardId: 'Free1' } }),
      ),
    );
    expect(outcomes(replies)).toEqual({ '200': 49, '201': 1 });
    expect(new Set(replies.map((r) => r.body.record._id)).size).toBe(1);
    expect(await count('library_records', 'family_id', familyId)).toBe(1);
  });

  it('30 simultaneous group creates in one family: 20 x 201, 10 x 400 group-limit, 20 stored', async () => {
    const familyId = 'race-groups';
    const members = ['auth0|race-groups-a', 'auth0|race-groups-b'];
    await putFamily(familyId, members);
    const tokens = await Promise.all(members.map((m) => deployment.token(m)));
    const replies = await Promise.all(
      range(30).map((i) =>
        http(on(i), 'POST', '/card/family/library/groups', {
          token: tokens[Math.floor(i / 2) % 2],
          body: { name: `group ${i}`, imageId: `image-${i}`, items: [] },
        }),
      ),
    );
    expect(outcomes(replies)).toEqual({ '201': 20, '400 group-limit': 10 });
    expect(await count('library_groups', 'family_id', familyId)).toBe(20);
    for (const s of servers) {
      const list = await http(s.url, 'GET', '/card/family/library/groups', { token: tokens[0] });
      expect(list.body).toHaveLength(20);
    }
  });

  it('an answer one instance keeps by its tag gives way at once to a write made on the other', async () => {
    // Each instance keeps the answers of its reads by entity tag (src/http/answer-cache.ts); the
    // tag is read from the shared database on every request, so a write anywhere is seen at once.
    const familyId = 'kept-answers';
    const members = ['auth0|kept-a', 'auth0|kept-b'];
    await putFamily(familyId, members);
    const [a, b] = await Promise.all(members.map((m) => deployment.token(m)));
    const [one, other] = servers.map((s) => s.url) as [string, string];
    const titles = async (): Promise<string[]> => {
      const r = await http(one, 'GET', '/content/mine', { token: a });
      expect(r.status).toBe(200);
      return r.body.cards.map((c: { title: string }) => c.title);
    };
    const libraryIds = async (): Promise<string[]> => {
      const r = await http(one, 'GET', '/card/family/library', { token: a });
      expect(r.status).toBe(200);
      return r.body.cards.map((c: { cardId: string }) => c.cardId);
    };
    expect(await titles()).toEqual([]);
    expect(await titles()).toEqual([]);
    expect(await libraryIds()).toEqual([]);
    expect(await libraryIds()).toEqual([]);

    expect((await http(other, 'POST', '/content', { token: a, body: cardBody('Written elsewhere') })).status).toBe(201);
    expect(await titles()).toEqual(['Written elsewhere']);
    // The other member's add, on the other instance, changes what the first member's library shows.
    expect((await http(other, 'POST', '/card/family/library', { token: b, body: { cardId: 'Free2' } })).status).toBe(201);
    expect(await libraryIds()).toContain('Free2');
  });

  it('40 concurrent PUTs on one wishlist leave exactly one of the bodies, never a mix', async () => {
    const token = await deployment.token('auth0|race-wishlist-put');
    const created = await http(on(0), 'POST', '/wishlists', { token, body: { content: [{ item: 'Free1' }] } });
    expect(created.status).toBe(201);
    const id = created.body.wishlistId as string;
    // Body w: 50 elements, every one marked with its writer w.
    const bodyOf = (w: number): { item: string; writer: number; pos: number }[] =>
      range(50).map((pos) => ({ item: FREE_CARDS[(w + pos) % FREE_CARDS.length]!, writer: w, pos }));
    const replies = await Promise.all(
      range(40).map((w) => http(on(w), 'PUT', `/wishlists/${id}`, { token, body: { content: bodyOf(w) } })),
    );
    expect(outcomes(replies)).toEqual({ '200': 40 });
    replies.forEach((r, w) => expect(r.body.content).toEqual(bodyOf(w)));
    for (const s of servers) {
      const stored = await http(s.url, 'GET', `/wishlists/${id}`, { token });
      const writer = stored.body.content[0].writer as number;
      expect(stored.body.content).toEqual(bodyOf(writer));
    }
  });

  it('40 concurrent PUTs on one group leave exactly one of the bodies, never a mix', async () => {
    const member = 'auth0|race-group-put';
    await putFamily('race-group-put', [member]);
    const token = await deployment.token(member);
    for (const cardId of FREE_CARDS) {
      const r = await http(on(0), 'POST', '/card/family/library', { token, body: { cardId } });
      expect(r.status).toBe(201);
    }
    const created = await http(on(1), 'POST', '/card/family/library/groups', {
      token,
      body: { name: 'start', imageId: 'start', items: [] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // Body w: its own name and image, and the library's cards rotated by w.
    const itemsOf = (w: number): string[] => range(FREE_CARDS.length).map((k) => FREE_CARDS[(w + k) % FREE_CARDS.length]!);
    const bodyOf = (w: number) => ({
      name: `name ${w}`,
      imageId: `image-${w}`,
      items: itemsOf(w).map((contentId) => ({ contentId })),
    });
    const view = (g: any) => ({ name: g.name, imageId: g.imageId, items: g.items.map((i: { contentId: string }) => i.contentId) });
    const expected = (w: number) => ({ name: `name ${w}`, imageId: `image-${w}`, items: itemsOf(w) });

    const replies = await Promise.all(
      range(40).map((w) => http(on(w), 'PUT', `/card/family/library/groups/${id}`, { token, body: bodyOf(w) })),
    );
    expect(outcomes(replies)).toEqual({ '200': 40 });
    replies.forEach((r, w) => expect(view(r.body)).toEqual(expected(w)));
    for (const s of servers) {
      const stored = view((await http(s.url, 'GET', `/card/family/library/groups/${id}`, { token })).body);
      const writer = Number(/^name (\d+)$/.exec(stored.name)?.[1]);
      expect(stored).toEqual(expected(writer));
    }
  });

  it.each([
    ['a wishlist', '/wishlists', () => ({ content: [{ item: 'Free1' }] })],
    ['a card', '/content', () => cardBody('Sent once')],
    ['a group', '/card/family/library/groups', () => ({ name: 'Sent once', imageId: 'once', items: [] })],
  ])('20 simultaneous identical creates of %s with one Idempotency-Key on both instances create exactly one', async (_what, url, body) => {
    const user = `auth0|idempotent-${url.replaceAll('/', '-')}`;
    const token = await deployment.token(user);
    const key = `retry-${url.length}-0b5f6d2e`;
    const replies = await Promise.all(
      range(20).map((i) => http(on(i), 'POST', url, { token, body: body(), headers: { 'idempotency-key': key } })),
    );
    // One ran; the others got its answer again, or were told it was still running.
    const counts = outcomes(replies);
    expect((counts['201'] ?? 0) + (counts['409 idempotency-key-in-use'] ?? 0), JSON.stringify(counts)).toBe(20);
    const created = replies.filter((r) => r.status === 201);
    expect(created.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(new Set(created.map((r) => JSON.stringify(r.body))).size).toBe(1);
    // A retry after the burst, on either instance, gets the answer.
    for (const s of servers) {
      const again = await http(s.url, 'POST', url, { token, body: body(), headers: { 'idempotency-key': key } });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(created[0]!.body);
    }
    const { db } = deployment.store();
    const table = { '/wishlists': 'wishlists', '/content': 'cards', '/card/family/library/groups': 'library_groups' } as const;
    if (url === '/card/family/library/groups') {
      const familyId = (await http(on(0), 'GET', '/user/family?allowStub=true', { token })).body.family.familyId as string;
      expect(await count('library_groups', 'family_id', familyId)).toBe(1);
    } else {
      const row = await db
        .selectFrom(table[url as '/wishlists' | '/content'])
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('user_id', '=', user)
        .executeTakeFirstOrThrow();
      expect(Number(row.n)).toBe(1);
    }
  });

  it.each([
    ['a group', 'group'],
    ['a wishlist', 'wishlist'],
  ])('20 PUTs of %s with one If-Match tag on both instances: one 200, 19 x 412, the winner stored', async (_what, kind) => {
    const member = `auth0|if-match-${kind}`;
    await putFamily(`if-match-${kind}`, [member]);
    const token = await deployment.token(member);
    const created =
      kind === 'group'
        ? await http(on(0), 'POST', '/card/family/library/groups', { token, body: { name: 'start', imageId: 'start', items: [] } })
        : await http(on(0), 'POST', '/wishlists', { token, body: { content: [{ item: 'start' }] } });
    expect(created.status).toBe(201);
    const url = kind === 'group' ? `/card/family/library/groups/${created.body.id}` : `/wishlists/${created.body.wishlistId}?format=raw`;
    const body = (w: number) => (kind === 'group' ? { name: `writer ${w}` } : { content: [{ item: `writer ${w}` }] });
    // Read on one instance, written through both: the tag is the data's, not the instance's.
    const read = await http(on(1), 'GET', url, { token });
    const tag = read.headers.etag!;
    expect((await http(on(0), 'GET', url, { token, headers: { 'if-none-match': tag } })).status).toBe(304);
    const replies = await Promise.all(range(20).map((w) => http(on(w), 'PUT', url, { token, body: body(w), headers: { 'if-match': tag } })));
    expect(outcomes(replies)).toEqual({ '200': 1, '412 precondition-failed': 19 });
    const winner = replies.findIndex((r) => r.status === 200);
    for (const s of servers) {
      const stored = await http(s.url, 'GET', url, { token });
      expect(JSON.stringify(stored.body)).toContain(`writer ${winner}`);
      expect(stored.headers.etag).toBe(replies[winner]!.headers.etag);
    }
  });

  it('100 times: two families\' PUTs listing one new user race that user\'s first request; all answer as documented', async () => {
    const rounds = 100;
    const failures: string[] = [];
    // Ten rounds at a time: each round is three requests that race on both instances.
    for (let batch = 0; batch < rounds; batch += 10) {
      await Promise.all(
        range(10).map(async (j) => {
          const n = batch + j;
          const user = `auth0|family-racer-${n}`;
          const token = await deployment.token(user);
          const [a, b, own] = await Promise.all([
            http(on(n), 'PUT', `/admin/families/race-a-${n}`, { token: admin, body: { country: 'US', members: [{ userId: user }] } }),
            http(on(n + 1), 'PUT', `/admin/families/race-b-${n}`, { token: admin, body: { country: 'GB', members: [{ userId: user }] } }),
            http(on(n), 'GET', '/user/family?allowStub=true', { token }),
          ]);
          for (const [what, r] of [['PUT a', a], ['PUT b', b], ['GET', own]] as const) {
            const expected = what === 'GET' ? [200] : [201];
            if (!expected.includes(r.status)) failures.push(`round ${n} ${what}: ${r.status} ${JSON.stringify(r.body)}`);
          }
          // The user ends in exactly one of the two families, and sees it.
          const after = await http(on(n + 1), 'GET', '/user/family', { token });
          const familyId = after.body?.family?.familyId;
          if (familyId !== `race-a-${n}` && familyId !== `race-b-${n}`) {
            failures.push(`round ${n}: the user is in ${JSON.stringify(after.body)}`);
          }
          const listedIn = await Promise.all(
            [`race-a-${n}`, `race-b-${n}`].map(async (id) => {
              const { db } = deployment.store();
              const rows = await db.selectFrom('family_memberships').select('user_id').where('family_id', '=', id).where('listed', '=', 1).execute();
              return rows.map((r) => r.user_id);
            }),
          );
          if (listedIn.flat().filter((u) => u === user).length !== 1) failures.push(`round ${n}: listed in ${JSON.stringify(listedIn)}`);
        }),
      );
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('both instances stop on SIGTERM and exit 0', async () => {
    const exits = await Promise.all(servers.map((s) => s.stop('SIGTERM')));
    expect(exits).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });
});
