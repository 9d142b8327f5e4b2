import { expect, onTestFinished, vi } from 'vitest';
import { cardBody, type Reply, type TestApp } from './test-app.js';

/** The fixtures of the integration tests: ids, catalogue cards, families, libraries, the clock. */

/** ISO 8601 UTC with milliseconds, as `new Date().toISOString()` writes it. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const CARD_ID = /^[A-Za-z0-9]{5}$/;
/** Wishlist and share ids: 21 URL-safe characters. */
export const URL_SAFE_ID = /^[A-Za-z0-9_-]{21}$/;

export const VIEW = 'family:library:view';
export const MANAGE = 'family:library:manage';

let userCounter = 0;
/** A user id of the documented form, unique within the test run. */
export function newUser(name = 'user'): string {
  userCounter += 1;
  return `auth0|${name}-${process.pid}-${userCounter}`;
}

let cardCounter = 0;
/** A fresh catalogue card id: 5 characters of [A-Za-z0-9], unique within a test file. */
export function newCardId(): string {
  cardCounter += 1;
  return `K${cardCounter.toString(36).padStart(4, '0')}`;
}

let familyCounter = 0;
export function newFamilyId(name = 'fam'): string {
  familyCounter += 1;
  return `${name}-${process.pid}-${familyCounter}`;
}

/** Asserts a status, showing the body when it is not the expected one. */
export function expectStatus(reply: Reply, status: number): Reply {
  expect(reply.status, `status ${reply.status}: ${reply.raw.body.slice(0, 500)}`).toBe(status);
  return reply;
}

export async function adminToken(t: TestApp): Promise<string> {
  return t.token('auth0|operator', 'admin');
}

export interface ControlledClock {
  /** Moves the clock forward by `ms` milliseconds. */
  tick(ms: number): void;
}

/**
 * Holds the clock still for the rest of the test: `Date` (so `now()` of the services, jose's
 * expiry checks and the token cache) reads a time that moves only by `tick`, so that two writes
 * get the timestamps the test means them to have. Only `Date` is faked: timers, I/O and the
 * database run as ever. The real clock is back after the test.
 */
export function controlledClock(): ControlledClock {
  vi.useFakeTimers({ toFake: ['Date'] });
  onTestFinished(() => {
    vi.useRealTimers();
  });
  return {
    tick(ms) {
      vi.advanceTimersByTime(ms);
    },
  };
}

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

/** Creates (or replaces) a catalogue card through the admin API and returns its id. */
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

/** Creates a MYO card owned by `userId` through POST /content; returns the stored card. */
export async function createCard(
  t: TestApp,
  userId: string,
  body: Record<string, unknown> = cardBody(),
): Promise<Record<string, any>> {
  const r = await t.call('POST', '/content', { token: await t.token(userId, 'user:content:manage'), body });
  expectStatus(r, 201);
  return r.body.card;
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

/** The family id of `userId`, as GET /user/family?allowStub=true shows it. */
export async function familyIdOf(t: TestApp, userId: string): Promise<string> {
  const r = expectStatus(await t.call('GET', '/user/family?allowStub=true', { token: await t.token(userId, '') }), 200);
  return r.body.family.familyId as string;
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
