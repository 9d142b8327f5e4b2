import type { CardRow } from '../../db/database.js';
import type { Store } from '../../db/dialect.js';
import type { FamilyService } from '../families/service.js';
import { holds } from '../library/holdings.js';

/**
 * Who may read a card (DECISIONS.md, "Cards"): its owner (deleted or not); anyone, for a live
 * free catalogue card; and the members of a family whose library holds it, which includes every
 * live MYO card of the family's members. The one rule every path that shows a card to a user
 * asks; a refusal is answered like a missing card, so it never tells that the card exists.
 */
export async function mayReadCard(
  store: Store,
  families: Pick<FamilyService, 'findFamilyId'>,
  userId: string,
  card: Pick<CardRow, 'card_id' | 'user_id' | 'origin' | 'is_free' | 'deleted'>,
): Promise<boolean> {
  if (card.user_id === userId) return true;
  if (card.deleted === 1) return false;
  if (card.origin === 'catalogue' && card.is_free === 1) return true;
  const familyId = await families.findFamilyId(userId);
  return familyId !== undefined && (await holds(store.db, familyId, card.card_id));
}
