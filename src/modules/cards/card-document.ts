import type { NewCardRow } from '../../db/database.js';
import type { CardDoc } from './schemas.js';

/** The fields the server generates; what a client sends for them is ignored. */
export interface GeneratedCardFields {
  cardId: string;
  userId: string;
  createdAt: string;
  updatedAt: string;
  deleted: boolean;
}

const GENERATED = new Set(['cardId', 'userId', 'createdAt', 'updatedAt', 'slug', 'sortkey', 'deleted']);

/** A URL- and sort-friendly form of a title: "Bedtime Stories!" -> "bedtime-stories". */
export function slugify(title: string): string {
  return title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * The stored card: what the writer sent, minus the generated fields, plus their server values.
 * `content` and `metadata` are always objects, so clients can read into them.
 */
export function buildCardDoc(input: Record<string, unknown>, generated: GeneratedCardFields): CardDoc {
  const doc: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (!GENERATED.has(key) && value !== undefined) doc[key] = value;
  }
  const title = String(input.title);
  const slug = slugify(title) || generated.cardId.toLowerCase();
  return {
    ...doc,
    title,
    content: (input.content as Record<string, unknown> | undefined) ?? {},
    metadata: (input.metadata as Record<string, unknown> | undefined) ?? {},
    cardId: generated.cardId,
    userId: generated.userId,
    createdAt: generated.createdAt,
    updatedAt: generated.updatedAt,
    slug,
    sortkey: slug,
    deleted: generated.deleted,
  };
}

/**
 * What an update (`POST /content` with a `cardId`) writes: the stored card with the top-level
 * fields the client sent put over it; fields left out keep their stored values, and a field sent
 * as `null` is stored as `null`. A `content` sent without `chapters` (the list form leaves them
 * out, so a card read from a list and sent back carries none) keeps the stored chapters.
 */
export function mergeUpdate(stored: CardDoc, sent: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(sent)) {
    if (value !== undefined && !GENERATED.has(key)) merged[key] = value;
  }
  const content = sent.content as Record<string, unknown> | undefined;
  if (content !== undefined && !('chapters' in content) && 'chapters' in stored.content) {
    merged.content = { ...content, chapters: stored.content.chapters };
  }
  return merged;
}

/** The list form: the card without `content.chapters`. */
export function summaryOf(doc: CardDoc): Record<string, unknown> {
  const { chapters: _chapters, ...content } = doc.content;
  return { ...doc, content };
}

export function isFree(doc: Record<string, unknown>): boolean {
  return doc.availability === 'free';
}

/** In the club subscription: a non-empty `clubAvailability`. */
export function isInClub(doc: Record<string, unknown>): boolean {
  return Array.isArray(doc.clubAvailability) && doc.clubAvailability.length > 0;
}

/** The row that stores `doc`. */
export function cardRow(doc: CardDoc, origin: 'myo' | 'catalogue'): NewCardRow {
  return {
    card_id: doc.cardId,
    user_id: doc.userId,
    origin,
    is_free: isFree(doc) ? 1 : 0,
    in_club: isInClub(doc) ? 1 : 0,
    deleted: doc.deleted ? 1 : 0,
    sortkey: doc.sortkey,
    created_at: doc.createdAt,
    updated_at: doc.updatedAt,
    doc: JSON.stringify(doc),
    summary: JSON.stringify(summaryOf(doc)),
  };
}
