import type { CardRow } from '../../db/database.js';
import type { Store } from '../../db/dialect.js';
import type { FamilyService } from '../families/service.js';
import { heldCards, holds } from '../library/holdings.js';
import { findCards } from './queries.js';

/** What the policy reads of a card. */
export type CardAccessFacts = Pick<CardRow, 'card_id' | 'user_id' | 'origin' | 'is_free' | 'deleted'>;

/**
 * Who may read a card (DECISIONS.md, "Cards"): its owner (deleted or not); anyone, for a live
 * free catalogue card; and the members of a family whose library holds it, which includes every
 * live MYO card of the family's members. The one rule every path that shows a card to a user
 * asks; a refusal is answered like a missing card, so it never tells that the card exists.
 * `familyHolds` is asked only when the answer depends on the reader's family library.
 */
export async function cardVisibleTo(
  userId: string,
  card: CardAccessFacts,
  familyHolds: (cardId: string) => Promise<boolean>,
): Promise<boolean> {
  if (card.user_id === userId) return true;
  if (card.deleted === 1) return false;
  if (card.origin === 'catalogue' && card.is_free === 1) return true;
  return familyHolds(card.card_id);
}

/** The policy, with the reader's family library read from the store. */
export function mayReadCard(
  store: Store,
  families: Pick<FamilyService, 'findFamilyId'>,
  userId: string,
  card: CardAccessFacts,
): Promise<boolean> {
  return cardVisibleTo(userId, card, async (cardId) => {
    const familyId = await families.findFamilyId(userId);
    return familyId !== undefined && (await holds(store.db, familyId, cardId));
  });
}

/**
 * Of the cards `cardIds`, those `userId` may read (the same policy), with their rows: three
 * queries at most however many they are (the cards, the reader's family, its library's holdings
 * of the cards whose answer depends on it). Callers bound the number of ids.
 */
export async function readableCards(
  store: Store,
  families: Pick<FamilyService, 'findFamilyId'>,
  userId: string,
  cardIds: readonly string[],
): Promise<CardRow[]> {
  const cards = await findCards(store.db, cardIds);
  // The policy asks about the family library only where the answer depends on it: gather those
  // questions first, to answer them in one query.
  const asked: string[] = [];
  for (const card of cards) {
    await cardVisibleTo(userId, card, async (cardId) => {
      asked.push(cardId);
      return false;
    });
  }
  const familyId = asked.length > 0 ? await families.findFamilyId(userId) : undefined;
  const held = new Set(familyId ? (await heldCards(store.db, familyId, { cardIds: asked, form: 'summary' })).map((c) => c.cardId) : []);
  const readable: CardRow[] = [];
  for (const card of cards) {
    if (await cardVisibleTo(userId, card, async (cardId) => held.has(cardId))) readable.push(card);
  }
  return readable;
}
