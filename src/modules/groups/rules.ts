import { AppError, badRequest } from '../../shared/errors.js';

/**
 * The group criteria of DECISIONS.md ("Groups"), as pure functions: they apply alike to
 * creating and to updating a group.
 */

export const MAX_GROUPS_PER_FAMILY = 20;
export const MAX_GROUP_NAME_LENGTH = 100;

export interface GroupItem {
  contentId: string;
  addedAt: string;
}

/**
 * The count rule: a family holds at most 20 groups; one more is 400 `group-limit`. The caller
 * counts under the family's lock, so the rule holds under concurrent creates across instances.
 */
export function checkGroupLimit(held: number): void {
  if (held >= MAX_GROUPS_PER_FAMILY) {
    throw new AppError('group-limit', `a family can have at most ${MAX_GROUPS_PER_FAMILY} groups`);
  }
}

/** A name must not be empty (or blank); it is cut to 100 characters (code points, not UTF-16 units). */
export function cleanGroupName(name: string): string {
  if (name.trim() === '') throw badRequest('name must not be empty');
  return Array.from(name).slice(0, MAX_GROUP_NAME_LENGTH).join('');
}

/**
 * Items keep their order, lose duplicates, and drop (silently) any card the family library does
 * not hold (`held`); an item already in the group (`previous`) keeps its `addedAt`, a new one
 * gets `at`.
 */
export function cleanGroupItems(
  items: readonly { contentId: string }[],
  held: { has(contentId: string): boolean },
  previous: readonly GroupItem[],
  at: string,
): GroupItem[] {
  const addedAt = new Map(previous.map((i) => [i.contentId, i.addedAt]));
  const seen = new Set<string>();
  const out: GroupItem[] = [];
  for (const { contentId } of items) {
    if (seen.has(contentId) || !held.has(contentId)) continue;
    seen.add(contentId);
    out.push({ contentId, addedAt: addedAt.get(contentId) ?? at });
  }
  return out;
}

/**
 * The items a response shows, with the full card of each, in item order. An item whose card is
 * gone (deleted by its owner) has left the family library, so it is not shown: `items` and
 * `cards` always correspond one to one.
 */
export function visibleItems<D>(
  items: readonly GroupItem[],
  docs: ReadonlyMap<string, D>,
): { items: GroupItem[]; cards: D[] } {
  const shown: GroupItem[] = [];
  const cards: D[] = [];
  for (const item of items) {
    const doc = docs.get(item.contentId);
    if (doc === undefined) continue;
    shown.push(item);
    cards.push(doc);
  }
  return { items: shown, cards };
}

/**
 * `imageUrl`: for an uploaded family image (its id is a SHA-256), the family image endpoint, as
 * the public service answers it; otherwise (a pre-made image) the configured template, every
 * `{imageId}` becoming the URL-encoded id.
 */
export function groupImageUrl(template: string, imageId: string, publicBaseUrl: string): string {
  if (/^[0-9a-f]{64}$/.test(imageId)) return `${publicBaseUrl}/media/family/images/${imageId}`;
  return template.replaceAll('{imageId}', encodeURIComponent(imageId));
}

/**
 * The time of a change to something last modified at `previous`: `now`, or one millisecond after
 * `previous` when the clock has not moved past it (two writes within a millisecond, or a clock
 * step back), so that every update changes `lastModifiedAt` and it never goes backwards.
 */
export function modificationTime(previous: string, now: string): string {
  const before = Date.parse(previous);
  if (Number.isNaN(before) || Date.parse(now) > before) return now;
  return new Date(before + 1).toISOString();
}
