/**
 * The fixtures the scenarios read and write, made through the API with ids of their own, so that
 * they sit beside any seeded data set; and the tokens of their users.
 */
import { randomBytes } from 'node:crypto';
import { loadOrCreateSigningKey, mintToken, type SigningKey } from '../src/auth/local-issuer.js';
import type { Config } from '../src/config.js';
import { exchange } from './ceiling.js';

const USER_SCOPES = 'user:content:manage family:library:manage';

async function api(base: string, method: string, urlPath: string, token: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${base}${urlPath}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as unknown) : undefined };
}

/** The answer's JSON when its status is one of `statuses`, taken to have the shape `T` the caller reads. */
async function expectStatus<T = unknown>(
  p: Promise<{ status: number; json: unknown }>,
  statuses: number[],
  what: string,
): Promise<T> {
  const r = await p;
  if (!statuses.includes(r.status)) throw new Error(`fixture: ${what} answered ${r.status} ${JSON.stringify(r.json)}`);
  return r.json as T;
}

/** Runs `fn` over `items`, `width` at a time. */
async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const randomCardId = (): string => Array.from(randomBytes(5), (b) => ALNUM[b % 62]).join('');

function cardBody(title: string, chapters: number, tracks: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title,
    ...extra,
    metadata: { author: 'Bench', category: 'stories', description: 'A card of the benchmark fixtures.' },
    content: {
      activity: 'service_Player',
      version: '1',
      config: { autoadvance: 'next', onlineOnly: false },
      chapters: Array.from({ length: chapters }, (_, c) => ({
        key: String(c + 1).padStart(2, '0'),
        title: `Chapter ${c + 1}`,
        overlayLabel: String(c + 1),
        display: { icon16x16: 'service:#icon-star' },
        tracks: Array.from({ length: tracks }, (_, t) => ({
          key: String(t + 1).padStart(2, '0'),
          title: `Chapter ${c + 1}, part ${t + 1}`,
          trackUrl: `service:#${randomBytes(8).toString('hex')}`,
          type: 'audio',
          format: 'aac',
          duration: 240,
          fileSize: 3_000_000,
          display: { icon16x16: 'service:#icon-moon' },
        })),
      })),
    },
  };
}

export interface Fixtures {
  key: SigningKey;
  auth: { issuer: string; audience: string };
  list50: string;
  list1000: string;
  bigCardId: string;
  libraryCardId: string;
  groupId: string;
  groupBody: unknown;
  wishlistId: string;
  wishlistBody: unknown;
  /** Entity tags of the list of 1,000 cards and of the family library (issue 12: the 304s). */
  list1000Tag: string;
  libraryTag: string;
  /** A member of list50's family with no cards of their own, who creates MYO cards (card-create). */
  cardWriter: string;
  cardBody: unknown;
  /** Tokens of users with no wishlists, for the wishlist creates (10 each at most). */
  freshUsers: string[];
  /** The wishlist creates made so far, through every round (run-scenario.ts). */
  wishlistsMade: { n: number };
  /** The 20 free catalogue cards (the family library holds them, and the group). */
  catalogueCardIds: string[];
  /** Tokens of users in no family yet, each adding every catalogue card once (library-add-new). */
  adders: string[];
  /** The first adds made so far, through every round. */
  firstAdds: { n: number };
  /** Users in no family, each writing cards of their own (card-create-spread). */
  spreadWriters: string[];
  runTag: string;
  mint(sub: string, scope?: string): Promise<string>;
}

/** How many users write at once in card-create-spread: as many families as the measure. */
const SPREAD_WRITERS = 16;

export async function makeFixtures(base: string, config: Readonly<Config>): Promise<Fixtures> {
  if (config.auth.mode !== 'local') throw new Error('the benchmark signs its tokens with the local issuer');
  const key = await loadOrCreateSigningKey(config.auth.keyFile);
  const auth = { issuer: config.auth.issuer, audience: config.auth.audience };
  const mint = (sub: string, scope = USER_SCOPES): Promise<string> =>
    mintToken(key, { sub, scope, expiresIn: '6h', ...auth });
  const runTag = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const user = (name: string): string => `auth0|bench-${runTag}-${name}`;
  const admin = await mint('auth0|bench-admin', 'admin');
  const u50 = user('list50');
  const u1000 = user('list1000');
  const [t50, t1000, tPartner] = await Promise.all([mint(u50), mint(u1000), mint(user('partner'))]);

  // 20 free catalogue cards of 3 chapters of 3 tracks: the family library and the group.
  const catalogue: string[] = [];
  while (catalogue.length < 20) {
    const cardId = randomCardId();
    const r = await api(base, 'PUT', `/admin/cards/${cardId}`, admin, {
      ...cardBody(`Bench catalogue ${catalogue.length + 1}`, 3, 3),
      userId: 'cardshelf|catalogue',
      availability: 'free',
    });
    // 200 would be an existing catalogue card, 400 a MYO card: draw another id.
    if (r.status === 201) catalogue.push(cardId);
    else if (r.status !== 200 && r.status !== 400) throw new Error(`fixture: admin card ${r.status}`);
  }

  // The lists: 3 chapters of 2 tracks a card (the list form drops them), plus the big card.
  const big = await expectStatus<{ card: { cardId: string } }>(
    api(base, 'POST', '/content', t50, cardBody('Bench big card', 10, 5)),
    [201],
    'big card',
  );
  const bigCardId = big.card.cardId;
  const make = (token: string, n: number, from: number): Promise<void> =>
    inParallel(
      Array.from({ length: n }, (_, i) => i + from),
      8,
      async (i) => {
        await expectStatus(api(base, 'POST', '/content', token, cardBody(`Bench card ${String(i).padStart(4, '0')}`, 3, 2)), [201], 'card');
      },
    );
  await make(t50, 49, 1);
  await make(t1000, 1000, 1);

  await expectStatus(
    api(base, 'PUT', `/admin/families/bench-${runTag}`, admin, {
      country: 'GB',
      flags: { sharingOn: true },
      members: [
        { userId: u50, approved: true, verified: true, verifiedEmail: 'bench@example.com' },
        { userId: user('partner'), approved: true, verified: false },
      ],
      devices: [{ deviceId: `bench-${runTag}-kitchen` }, { deviceId: `bench-${runTag}-bedroom` }],
    }),
    [201],
    'family',
  );
  for (const cardId of catalogue) {
    await expectStatus(api(base, 'POST', '/card/family/library', t50, { cardId }), [201], 'library add');
  }
  const groupBody = { name: 'Bench group', imageId: 'moon', items: catalogue.map((contentId) => ({ contentId })) };
  const group = await expectStatus<{ id: string; items: unknown[]; cards: unknown[] }>(
    api(base, 'POST', '/card/family/library/groups', t50, groupBody),
    [201],
    'group',
  );
  if (group.items.length !== 20 || group.cards.length !== 20) throw new Error('fixture: the group lost items');

  const wishlistBody = {
    content: catalogue.slice(0, 10).map((item, i) => ({ item, ...(i % 3 === 0 ? { note: 'for the birthday' } : {}) })),
  };
  const wishlist = await expectStatus<{ wishlistId: string }>(api(base, 'POST', '/wishlists', t50, wishlistBody), [201], 'wishlist');
  const tagOf = async (token: string, urlPath: string): Promise<string> => {
    const r = await exchange(base, 'GET', urlPath, { authorization: `Bearer ${token}` });
    if (r.status !== 200) throw new Error(`fixture: ${urlPath} answered ${r.status}`);
    // None from a revision before entity tags (--against): its 304 scenarios then fail to capture.
    return r.headers.etag ?? '';
  };

  return {
    key,
    auth,
    list50: t50,
    list1000: t1000,
    bigCardId,
    libraryCardId: catalogue[0] as string,
    groupId: group.id,
    groupBody,
    wishlistId: wishlist.wishlistId,
    wishlistBody,
    list1000Tag: await tagOf(t1000, '/content/mine'),
    libraryTag: await tagOf(t50, '/card/family/library'),
    cardWriter: tPartner,
    cardBody: cardBody('Bench new card', 3, 2),
    freshUsers: [],
    wishlistsMade: { n: 0 },
    catalogueCardIds: catalogue,
    adders: [],
    firstAdds: { n: 0 },
    spreadWriters: await Promise.all(Array.from({ length: SPREAD_WRITERS }, (_, i) => mint(user(`spread-${i}`)))),
    runTag,
    mint,
  };
}

/** Mints new users into `users` (500 at a time) until it holds `count`: `sub`'s tail is `tag` and the index. */
async function mintUsers(f: Fixtures, users: string[], tag: string, count: number, scope?: string): Promise<void> {
  while (users.length < count) {
    const batch = Array.from({ length: Math.min(500, count - users.length) }, (_, i) => f.mint(`auth0|bench-${f.runTag}-${tag}${users.length + i}`, scope));
    users.push(...(await Promise.all(batch)));
  }
}

/** Users with no wishlists (wishlist-post), until there are `count`. */
export const mintFreshUsers = (f: Fixtures, count: number): Promise<void> => mintUsers(f, f.freshUsers, 'w', count, '');
/** Users in no family (library-add-new: their first add makes it), until there are `count`. */
export const mintAdders = (f: Fixtures, count: number): Promise<void> => mintUsers(f, f.adders, 'a', count);
