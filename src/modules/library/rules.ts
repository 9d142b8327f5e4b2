import type { CardRow, LibraryRecordRow } from '../../db/database.js';
import { newHexId } from '../../shared/ids.js';

/** The rules of adding a card to a family library (DECISIONS.md, "Family library"), as pure functions. */

export type Addability = 'ok' | 'not-found' | 'not-eligible';

/**
 * Whether `userId` may add `card` to their family library. A missing or deleted card, and another
 * user's MYO card, are not found (their existence is not revealed); a card that is neither free
 * nor in the club subscription is not eligible, whether or not the user subscribes.
 *
 * Another user's MYO card that the caller's family library already holds (`heldByFamily`: a
 * family member added it) is no secret to the caller, who can read it: it is treated like any
 * card there, so the add answers with the existing record (the interface's rule 4).
 */
export function addability(
  card: Pick<CardRow, 'user_id' | 'origin' | 'is_free' | 'in_club' | 'deleted'> | undefined,
  userId: string,
  heldByFamily = false,
): Addability {
  if (!card || card.deleted === 1) return 'not-found';
  if (card.origin === 'myo' && card.user_id !== userId && !heldByFamily) return 'not-found';
  if (card.is_free !== 1 && card.in_club !== 1) return 'not-eligible';
  return 'ok';
}

/** A new library record: `userId` added `cardId` to the family's library at `at`. */
export function newLibraryRecord(familyId: string, cardId: string, userId: string, at: string): LibraryRecordRow {
  return {
    record_id: newHexId(),
    family_id: familyId,
    card_id: cardId,
    provenance_id: userId,
    reason: 'USER_ADD',
    created_at: at,
    updated_at: at,
  };
}
