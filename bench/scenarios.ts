/**
 * The scenarios: the requests measured, each against its ceiling, with the target it is held
 * to. One list (`scenarios()` below); a new scenario is one more entry in it.
 */
import type { Fixtures } from './fixtures.js';

export interface Scenario {
  name: string;
  kind: 'read' | 'write';
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  /** The path as a route, for the tables (ids as placeholders). */
  route?: string;
  /** The target of the issue: a share of the ceiling's requests/s, or requests/s. */
  target: { ratio?: number; rps?: number; p99Ms?: number };
  token: string;
  body?: string;
  /** More request headers (If-None-Match, Idempotency-Key). */
  headers?: Record<string, string>;
  /** The one status every answer must have, when it is not a 2xx (a 304). */
  status?: number;
  /** Every answer after the first is a replay (Idempotent-Replayed), checked before the run. */
  replays?: boolean;
  /** Requests take these tokens in turn (several writers at once), instead of `token`. */
  tokens?: string[];
  note?: string;
}

export const WISHLISTS_PER_USER = 10;

export function scenarios(f: Fixtures): Scenario[] {
  return [
    { name: 'list-50', kind: 'read', method: 'GET', path: '/content/mine', target: { ratio: 0.5, p99Ms: 10 }, token: f.list50 },
    { name: 'list-1000', kind: 'read', method: 'GET', path: '/content/mine', target: { ratio: 0.35 }, token: f.list1000 },
    { name: 'card-10x5', kind: 'read', method: 'GET', path: `/content/${f.bigCardId}`, route: '/content/{cardId}', target: { ratio: 0.35 }, token: f.list50 },
    { name: 'family', kind: 'read', method: 'GET', path: '/user/family', target: { ratio: 0.35 }, token: f.list50 },
    {
      name: 'library-add-200',
      kind: 'write',
      method: 'POST',
      path: '/card/family/library',
      target: { rps: 3000 },
      token: f.list50,
      body: JSON.stringify({ cardId: f.libraryCardId }),
    },
    {
      name: 'library-add-new',
      kind: 'write',
      method: 'POST',
      path: '/card/family/library',
      target: {},
      token: f.list50,
      body: JSON.stringify({ cardId: f.libraryCardId }),
      note: "a first add: users in no family each add the 20 catalogue cards in turn, so every add is new to the family (a user's first also makes their family); compare with library-add-200",
    },
    { name: 'group-get', kind: 'read', method: 'GET', path: `/card/family/library/groups/${f.groupId}`, route: '/card/family/library/groups/{groupId}', target: { ratio: 0.35 }, token: f.list50 },
    {
      name: 'group-put',
      kind: 'write',
      method: 'PUT',
      path: `/card/family/library/groups/${f.groupId}`,
      route: '/card/family/library/groups/{groupId}',
      target: { rps: 3000 },
      token: f.list50,
      body: JSON.stringify(f.groupBody),
    },
    {
      name: 'wishlist-post',
      kind: 'write',
      method: 'POST',
      path: '/wishlists',
      target: { rps: 3000 },
      token: f.list50,
      body: JSON.stringify(f.wishlistBody),
      note: `each request by the next of many fresh users, ${WISHLISTS_PER_USER} creates a user (the limit), so every create is a 201`,
    },
    {
      name: 'wishlist-put',
      kind: 'write',
      method: 'PUT',
      path: `/wishlists/${f.wishlistId}`,
      route: '/wishlists/{wishlistId}',
      target: { rps: 3000 },
      token: f.list50,
      body: JSON.stringify(f.wishlistBody),
    },
    // Issue 12: a poll that finds nothing changed, beside the 200 it replaces; a retried create.
    {
      name: 'list-1000-304',
      kind: 'read',
      method: 'GET',
      path: '/content/mine',
      target: {},
      token: f.list1000,
      headers: { 'if-none-match': f.list1000Tag },
      status: 304,
      note: 'If-None-Match with the current tag: compare its CPU µs/req with list-1000',
    },
    { name: 'library', kind: 'read', method: 'GET', path: '/card/family/library', target: {}, token: f.list50, note: 'the family library: 20 catalogue cards and 50 MYO cards' },
    {
      name: 'library-304',
      kind: 'read',
      method: 'GET',
      path: '/card/family/library',
      target: {},
      token: f.list50,
      headers: { 'if-none-match': f.libraryTag },
      status: 304,
      note: 'If-None-Match with the current tag: compare its CPU µs/req with library',
    },
    {
      name: 'wishlist-post-replay',
      kind: 'write',
      method: 'POST',
      path: '/wishlists',
      target: {},
      token: f.list50,
      body: JSON.stringify(f.wishlistBody),
      headers: { 'idempotency-key': `bench-${f.runTag}` },
      replays: true,
      note: 'one Idempotency-Key: the first request creates, every later one replays (201, Idempotent-Replayed); compare with wishlist-post',
    },
    // Last: every create adds a card to the family library that the reads above show.
    {
      name: 'card-create',
      kind: 'write',
      method: 'POST',
      path: '/content',
      target: { rps: 3000 },
      token: f.cardWriter,
      body: JSON.stringify(f.cardBody),
      note: "a MYO card of 3 chapters of 2 tracks, by a member of the list-50 user's family: each request a new card",
    },
    // Issue 37: the same write spread over many ordering domains (families) at once.
    {
      name: 'card-create-spread',
      kind: 'write',
      method: 'POST',
      path: '/content',
      target: {},
      token: f.spreadWriters[0] as string,
      tokens: f.spreadWriters,
      body: JSON.stringify(f.cardBody),
      note: `card-create by ${f.spreadWriters.length} users in no family (an event ordering domain each), the requests taking turns: compare its rate with card-create's single writer`,
    },
  ];
}

export function requestHeaders(s: Scenario, token: string): Record<string, string> {
  return {
    accept: 'application/json',
    authorization: `Bearer ${token}`,
    ...(s.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...s.headers,
  };
}
