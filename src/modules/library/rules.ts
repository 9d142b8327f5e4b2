import type { CardRow } from '../../db/database.js';

/** The rules of adding a card to a family library (DECISIONS.md, "Family library"), as pure functions. */

export type Addability = 'ok' | 'not-found' | 'not-eligible';

/**
 * Whether `userId` may add `card` to their family library. A missing or deleted card, and another
 * user's MYO card, are not found (their existence is not revealed); a card that is neither free
 * nor in the club subscription is not eligible, whether or not the user subscribes.
 */
export function addability(
  card: Pick<CardRow, 'user_id' | 'origin' | 'is_free' | 'in_club' | 'deleted'> | undefined,
  userId: string,
): Addability {
  if (!card || card.deleted === 1 || (card.origin === 'myo' && card.user_id !== userId)) return 'not-found';
  if (card.is_free !== 1 && card.in_club !== 1) return 'not-eligible';
  return 'ok';
}
