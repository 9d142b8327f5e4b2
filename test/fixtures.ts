import { expect } from 'vitest';
import { cardBody, type Reply, type TestApp } from './helpers.js';

/** ISO 8601 UTC with milliseconds, as `new Date().toISOString()` writes it. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const CARD_ID = /^[A-Za-z0-9]{5}$/;

let counter = 0;
/** A user id of the documented form, unique within the test run. */
export function newUser(name = 'user'): string {
  counter += 1;
  return `auth0|${name}-${process.pid}-${counter}`;
}

let cardCounter = 0;
/** A fresh catalogue card id: 5 characters of [A-Za-z0-9], unique within a test file. */
export function newCatalogueId(): string {
  cardCounter += 1;
  return `K${cardCounter.toString(36).padStart(4, '0')}`;
}

/** Asserts a status, showing the body when it is not the expected one. */
export function expectStatus(reply: Reply, status: number): Reply {
  expect(reply.status, `status ${reply.status}: ${reply.raw.body.slice(0, 500)}`).toBe(status);
  return reply;
}

export async function adminToken(t: TestApp): Promise<string> {
  return t.token('auth0|operator', 'admin');
}

/** A catalogue card as the admin API takes it. */
export function catalogueBody(
  title: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ...cardBody(title),
    userId: 'auth0|store',
    availability: 'premium',
    clubAvailability: [],
    ...extra,
  };
}

/** Creates (or replaces) a catalogue card through the admin API; returns the stored card. */
export async function putCatalogueCard(
  t: TestApp,
  cardId: string,
  body: Record<string, unknown>,
): Promise<Record<string, any>> {
  const r = await t.call('PUT', `/admin/cards/${cardId}`, { token: await adminToken(t), body });
  expect([200, 201], `admin card ${cardId}: ${r.raw.body.slice(0, 300)}`).toContain(r.status);
  return r.body.card;
}

/** Creates (or replaces) a family through the admin API. */
export async function putFamily(
  t: TestApp,
  familyId: string,
  memberIds: string[],
  devices: string[] = [],
): Promise<Record<string, any>> {
  const r = await t.call('PUT', `/admin/families/${familyId}`, {
    token: await adminToken(t),
    body: {
      country: 'US',
      members: memberIds.map((userId) => ({ userId, approved: true, verified: false })),
      devices: devices.map((deviceId) => ({ deviceId })),
    },
  });
  expect([200, 201], `admin family ${familyId}: ${r.raw.body.slice(0, 300)}`).toContain(r.status);
  return r.body.family;
}

/** Adds a card to the family library of `userId`; returns the reply. */
export async function addToLibrary(t: TestApp, userId: string, cardId: string): Promise<Reply> {
  return t.call('POST', '/card/family/library', {
    token: await t.token(userId, 'family:library:manage'),
    body: { cardId },
  });
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
