import { createHash } from 'node:crypto';
import type { CardRow, LibraryRecordRow } from '../../db/database.js';
import { newHexId } from '../../shared/ids.js';

/** The rules of adding a card to a family library (DECISIONS.md, "Family library"), as pure functions. */

export type Addability = 'ok' | 'not-found' | 'not-eligible' | 'held-as-family-content';

/**
 * What adding `card` to the caller's family library does. A missing or deleted card is not found.
 * A MYO card is in the library of its owner's family already (holdings.ts): for a caller who may
 * read it (`readable`: the owner, or a member of that family) the add answers with the record it
 * is held by; for anyone else it is not found, so its existence is not revealed. Any other card
 * must be free or in the club subscription, whether or not the family subscribes.
 */
export function addability(
  card: Pick<CardRow, 'origin' | 'is_free' | 'in_club' | 'deleted'> | undefined,
  readable: boolean,
): Addability {
  if (!card || card.deleted === 1) return 'not-found';
  if (card.origin === 'myo') return readable ? 'held-as-family-content' : 'not-found';
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

/**
 * The record a member's MYO card is held by. It is not stored (the card is in the library by
 * being a member's, not by an add), so it is derived, the same at every call: `_id` from the
 * family and the card (24 hex digits, like stored ids), `provenanceId` the card's owner, who
 * brought it in by making it, `createdAt` and `updatedAt` the card's creation, and `reason`
 * `USER_ADD`, the one reason the public service documents (clients may not know another).
 */
export function familyContentRecord(
  familyId: string,
  card: Pick<CardRow, 'card_id' | 'user_id' | 'created_at'>,
): LibraryRecordRow {
  return {
    record_id: createHash('sha256').update(`${familyId}:${card.card_id}`).digest('hex').slice(0, 24),
    family_id: familyId,
    card_id: card.card_id,
    provenance_id: card.user_id,
    reason: 'USER_ADD',
    created_at: card.created_at,
    updated_at: card.created_at,
  };
}
