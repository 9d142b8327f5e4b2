import { useSignal, type Signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, coverOf } from '../../api.js';

/** A card as a wishlist shows it: its title and cover; `missing` when it cannot be read. */
export interface KnownCard {
  cardId: string;
  title: string;
  cover?: string | undefined;
}

/**
 * The cards a person may pick for a wishlist: their own (`/content/mine`) and the family
 * library's (catalogue cards added to it included). The API lists no catalogue beyond these.
 */
export function usePickableCards(): Signal<KnownCard[] | undefined> {
  const cards = useSignal<KnownCard[] | undefined>(undefined);
  useEffect(() => {
    void Promise.all([api.GET('/content/mine'), api.GET('/card/family/library')]).then(([mine, library]) => {
      const byId = new Map<string, KnownCard>();
      for (const card of mine.data?.cards ?? []) byId.set(card.cardId, { cardId: card.cardId, title: card.title, cover: coverOf(card) });
      for (const { cardId, card } of library.data?.cards ?? []) {
        if (!byId.has(cardId)) byId.set(cardId, { cardId, title: card.title, cover: coverOf(card) });
      }
      cards.value = [...byId.values()].sort((a, b) => a.title.localeCompare(b.title));
    });
  }, []);
  return cards;
}

/**
 * Titles and covers of the cards `ids` name: from `known`, else read one by one (a catalogue
 * card, say); an id no read answers is `null` (a card no longer available). Undefined: still reading.
 */
export function useCardsNamed(ids: readonly string[], known: readonly KnownCard[] | undefined): Map<string, KnownCard | null | undefined> {
  const read = useSignal<Map<string, KnownCard | null>>(new Map());
  const key = ids.join('\n');
  useEffect(() => {
    if (!known) return;
    const have = new Set(known.map((c) => c.cardId));
    const unread = [...new Set(ids)].filter((id) => !have.has(id) && !read.value.has(id));
    if (unread.length === 0) return;
    void Promise.all(
      unread.map(async (cardId) => {
        const { data } = await api.GET('/card/{cardId}', { params: { path: { cardId } } });
        return [cardId, data ? { cardId, title: data.card.title, cover: coverOf(data.card) } : null] as const;
      }),
    ).then((found) => (read.value = new Map([...read.value, ...found])));
  }, [key, known]);
  const named = new Map<string, KnownCard | null | undefined>();
  for (const id of ids) named.set(id, known?.find((c) => c.cardId === id) ?? read.value.get(id));
  return named;
}
