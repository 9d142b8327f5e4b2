import { expect } from 'vitest';
import { cardBody, type Reply, type TestApp } from './helpers.js';
import { adminToken, expectStatus, newUser } from './fixtures.js';

/**
 * Shared fixtures of the family, library, group and wishlist tests, on top of fixtures.ts (one
 * user counter for both, so that ids never collide in a file that uses the two).
 */

export { adminToken, expectStatus, ISO_MS, newUser } from './fixtures.js';

/** Wishlist and share ids: 21 URL-safe characters. */
export const URL_SAFE_ID = /^[A-Za-z0-9_-]{21}$/;

export const VIEW = 'family:library:view';
export const MANAGE = 'family:library:manage';

let cardCounter = 0;
/** A fresh catalogue card id: 5 characters of [A-Za-z0-9], unique within a test file. */
export function newCardId(): string {
  cardCounter += 1;
  return `F${cardCounter.toString(36).padStart(4, '0')}`;
}

let familyCounter = 0;
export function newFamilyId(name = 'fam'): string {
  familyCounter += 1;
  return `${name}-${process.pid}-${familyCounter}`;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export type Offer = 'free' | 'club' | 'premium';

/** A catalogue card body as the admin API takes it: free, club (premium in the club) or premium. */
export function catalogueCard(title: string, offer: Offer, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...cardBody(title),
    userId: 'auth0|store',
    availability: offer === 'free' ? 'free' : 'premium',
    clubAvailability: offer === 'club' ? [{ store: 'us' }] : [],
    ...extra,
  };
}

/** Creates a catalogue card through the admin API and returns its id. */
export async function putCatalogueCard(
  t: TestApp,
  offer: Offer,
  opts: { cardId?: string; title?: string; extra?: Record<string, unknown> } = {},
): Promise<string> {
  const cardId = opts.cardId ?? newCardId();
  const r = await t.call('PUT', `/admin/cards/${cardId}`, {
    token: await adminToken(t),
    body: catalogueCard(opts.title ?? `${offer} card ${cardId}`, offer, opts.extra),
  });
  expect([200, 201], `admin card ${cardId}: ${r.raw.body.slice(0, 300)}`).toContain(r.status);
  expect(r.body.card.cardId).toBe(cardId);
  return cardId;
}

export interface AdminMember {
  userId: string;
  approved?: boolean;
  verified?: boolean;
  verifiedEmail?: string;
}

/** `PUT /admin/families/{familyId}`; returns the reply (201 on create, 200 on replace). */
export async function putFamily(
  t: TestApp,
  familyId: string,
  body: { country?: string; flags?: Record<string, unknown>; members?: AdminMember[]; devices?: { deviceId: string }[] },
): Promise<Reply> {
  return t.call('PUT', `/admin/families/${familyId}`, {
    token: await adminToken(t),
    body: { country: 'US', ...body },
  });
}

/** A populated family with the given members (all approved); returns its id. */
export async function familyOf(t: TestApp, members: string[], devices: string[] = []): Promise<string> {
  const familyId = newFamilyId();
  const r = await putFamily(t, familyId, {
    members: members.map((userId) => ({ userId, approved: true })),
    devices: devices.map((deviceId) => ({ deviceId })),
  });
  expectStatus(r, 201);
  return familyId;
}

/** `POST /card/family/library` for `userId`. */
export async function addToLibrary(t: TestApp, userId: string, cardId: unknown): Promise<Reply> {
  return t.call('POST', '/card/family/library', { token: await t.token(userId, MANAGE), body: { cardId } });
}

/** Adds a card and insists it was added (201) or already there (200). */
export async function mustAdd(t: TestApp, userId: string, cardId: string): Promise<void> {
  const r = await addToLibrary(t, userId, cardId);
  expect([200, 201], `add ${cardId}: ${r.raw.body.slice(0, 300)}`).toContain(r.status);
}

/** Creates a MYO card owned by `userId` through POST /content; returns its id. */
export async function createMyoCard(t: TestApp, userId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await t.call('POST', '/content', {
    token: await t.token(userId, 'user:content:manage'),
    body: cardBody('My own card', extra),
  });
  expectStatus(r, 201);
  return r.body.card.cardId as string;
}

/** The family id of `userId`, as GET /user/family?allowStub=true shows it. */
export async function familyIdOf(t: TestApp, userId: string): Promise<string> {
  const r = expectStatus(await t.call('GET', '/user/family?allowStub=true', { token: await t.token(userId, '') }), 200);
  return r.body.family.familyId as string;
}
