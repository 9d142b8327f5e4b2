import type { CardRow } from '../../db/database.js';
import type { Store } from '../../db/dialect.js';
import { readableCards } from '../cards/access.js';
import { mediaRefHashesIn } from '../cards/media-ref.js';
import type { FamilyService } from '../families/service.js';
import { readersAmong } from './queries.js';

/**
 * Who may read stored media by its reference (docs/api.md, "Signed media URLs"). A reference
 * (`service:#<hash>`, `yoto:#<hash>`) is only a name, and anyone may write any name into their
 * own card or wishlist: knowing an object's hash gives no right to its bytes. A reader may read
 * an object when
 *
 * - they hold it (an upload, its transcode, a cover, an icon), or their family does (its images);
 * - it is public: held as a cover or a display icon, which `/media/public/{id}` serves to anyone;
 * - a card they may read references it and vouches for it: a catalogue card (an operator wrote
 *   it), or a MYO card whose owner holds it, themselves or through their family. A MYO card
 *   vouches for nothing its owner could not read: naming another user's hash in one's own card
 *   does not make it readable to anyone.
 *
 * Each answer costs a bounded number of queries, whatever the number of references in it.
 */
export interface MediaReadRights {
  /**
   * Of `hashes`, the references of `card`, which the caller checked that `userId` may read:
   * those `userId` may read. Every one of a catalogue card; of a MYO card, those that are
   * public or that the reader or the card's owner holds. No query for a catalogue card, one
   * for a MYO card.
   */
  forCard(userId: string, card: Pick<CardRow, 'user_id' | 'origin'>, hashes: ReadonlySet<string>): Promise<Set<string>>;
  /**
   * Of `hashes`, those `userId` may read: public ones, those the reader holds, and those that a
   * card `userId` may read vouches for, among the cards `named` maps to hashes (a wishlist
   * element's `item`, for the references inside that element). One query when the reader's own
   * rights settle every hash; at most five otherwise (MAX_VOUCHING_CARDS cards consulted).
   */
  forNamedCards(userId: string, hashes: ReadonlySet<string>, named: ReadonlyMap<string, ReadonlySet<string>>): Promise<Set<string>>;
}

/**
 * Cards whose documents one answer reads at most to find what they vouch for (the first ones
 * named beside references the reader's own rights do not settle): a card is up to a MiB of
 * JSON, and a wishlist can name thousands.
 */
export const MAX_VOUCHING_CARDS = 100;

export function createMediaReadRights(store: Store, families: Pick<FamilyService, 'findFamilyId'>): MediaReadRights {
  const { db } = store;

  /** The hashes that are public or held by one of `users`. */
  async function heldBy(hashes: Iterable<string>, users: readonly string[]): Promise<Set<string>> {
    const readers = await readersAmong(db, hashes, users);
    return new Set([...readers].filter(([, r]) => r.public || r.holders.size > 0).map(([hash]) => hash));
  }

  return {
    async forCard(userId, card, hashes) {
      if (hashes.size === 0) return new Set();
      if (card.origin === 'catalogue') return new Set(hashes);
      return heldBy(hashes, [userId, card.user_id]);
    },

    async forNamedCards(userId, hashes, named) {
      if (hashes.size === 0) return new Set();
      const readable = await heldBy(hashes, [userId]);
      const open = (refs: ReadonlySet<string>): string[] => [...refs].filter((h) => hashes.has(h) && !readable.has(h));
      const cardIds = [...named].filter(([, refs]) => open(refs).length > 0).map(([cardId]) => cardId);
      if (cardIds.length === 0) return readable;

      // Which references each readable card vouches for: those of its own document that sit
      // beside it; a catalogue card's at once, a MYO card's when its owner holds them.
      const vouched = new Map<string, Set<string>>();
      for (const card of await readableCards(store, families, userId, cardIds.slice(0, MAX_VOUCHING_CARDS))) {
        const inDoc = mediaRefHashesIn(card.doc);
        const refs = open(named.get(card.card_id) ?? new Set()).filter((h) => inDoc.has(h));
        if (card.origin === 'catalogue') refs.forEach((h) => readable.add(h));
        else for (const h of refs) vouched.set(h, (vouched.get(h) ?? new Set()).add(card.user_id));
      }
      if (vouched.size === 0) return readable;
      const owners = [...new Set([...vouched.values()].flatMap((o) => [...o]))];
      for (const [hash, readers] of await readersAmong(db, vouched.keys(), owners)) {
        if (readers.public || [...readers.holders].some((owner) => vouched.get(hash)?.has(owner))) readable.add(hash);
      }
      return readable;
    },
  };
}
