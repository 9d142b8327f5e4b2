import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useActions } from '../actions.js';
import { api, coverOf, errorMessage, type CardSummary, type Wishlist } from '../api.js';
import { Cover } from '../design/cover.js';
import { messages } from '../messages.js';
import { ErrorText, Page, Status } from '../ui.js';

const t = messages.wishlists;
export const shareLink = (shareId: string): string => `${location.origin}/app/shared/${encodeURIComponent(shareId)}`;

export function WishlistsPage() {
  const lists = useSignal<Wishlist[] | undefined>(undefined);
  const known = useSignal<Map<string, CardSummary>>(new Map());
  const { error, status, act } = useActions(() => load());
  const load = async () => {
    const { data, error: e, response } = await api.GET('/wishlists', { params: { query: { format: 'raw' } } });
    if (data) lists.value = data.wishlists;
    else error.value = errorMessage(e, response);
  };
  useEffect(() => void load(), []);
  // The cards an item may name (one's own and the family library's), for their titles and covers.
  useEffect(() => {
    void Promise.all([api.GET('/content/mine'), api.GET('/card/family/library')]).then(([mine, library]) => {
      const byId = new Map<string, CardSummary>();
      for (const card of library.data?.cards ?? []) byId.set(card.cardId, card.card);
      for (const card of mine.data?.cards ?? []) byId.set(card.cardId, card);
      known.value = byId;
    });
  }, []);
  const put = (w: Wishlist, items: string[]) =>
    act(api.PUT('/wishlists/{wishlistId}', { params: { path: { wishlistId: w.wishlistId } }, body: { content: items.map((item) => ({ item })) } }), messages.common.saved);

  return (
    <Page title={t.title}>
      <ErrorText message={error.value} />
      <Status>{status.value}</Status>
      <button type="button" class="primary" onClick={() => void act(api.POST('/wishlists', { body: { content: [] } }), messages.common.saved)}>
        {t.create}
      </button>
      {lists.value?.length === 0 && <p>{t.none}</p>}
      <ul class="wishlists">
        {lists.value?.map((w, n) => (
          <WishlistRow key={w.wishlistId} list={w} n={n + 1} known={known.value} onItems={(items) => void put(w, items)} onDelete={() => void act(api.DELETE('/wishlists/{wishlistId}', { params: { path: { wishlistId: w.wishlistId } } }), messages.common.saved)} onCopied={(message) => (status.value = message)} />
        ))}
      </ul>
    </Page>
  );
}

function WishlistRow({ list, n, known, onItems, onDelete, onCopied }: { list: Wishlist; n: number; known: Map<string, CardSummary>; onItems: (items: string[]) => void; onDelete: () => void; onCopied: (message: string) => void }) {
  const item = useSignal('');
  const items = list.content.map((c) => c.item);
  const link = shareLink(list.shareId);
  return (
    <li class="wishlist">
      <h2>
        {t.title} {n} ({messages.words.cards(items.length)})
      </h2>
      <ul class="items">
        {items.map((id, i) => (
          <li key={`${id}-${i}`} class="item">
            <Cover cardId={id} title={known.get(id)?.title ?? id} src={known.has(id) ? coverOf(known.get(id)!) : undefined} />
            <span class="item-title">{known.get(id)?.title ?? id}</span>
            <button type="button" aria-label={messages.common.remove(id)} onClick={() => onItems(items.filter((_, j) => j !== i))}>
              ✕
            </button>
          </li>
        ))}
      </ul>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          onItems([...items, item.value.trim()]);
          item.value = '';
        }}
      >
        <label for={`item-${list.wishlistId}`}>{t.item}</label>
        <input id={`item-${list.wishlistId}`} value={item.value} onInput={(e) => (item.value = e.currentTarget.value)} required />
        <button type="submit">{t.addItem}</button>
      </form>
      <div class="toolbar">
        <label for={`link-${list.wishlistId}`}>{t.shareLink}</label>
        <input id={`link-${list.wishlistId}`} readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={() => void navigator.clipboard.writeText(link).then(() => onCopied(t.copied), () => onCopied(t.copyByHand))}>
          {t.copyLink}
        </button>
        <button type="button" onClick={onDelete}>
          {messages.common.delete}
        </button>
      </div>
    </li>
  );
}

/** A wishlist someone shared: read-only, for a signed-in person, as the API allows. */
export function SharedWishlistPage({ shareId }: { shareId: string }) {
  const list = useSignal<Wishlist | undefined>(undefined);
  const error = useSignal<string | undefined>(undefined);
  useEffect(() => {
    void api.GET('/wishlists/shared/{shareId}', { params: { path: { shareId } } }).then(({ data, error: e, response }) => {
      if (data) list.value = data;
      else error.value = errorMessage(e, response);
    });
  }, [shareId]);
  return (
    <Page title={t.shared}>
      <ErrorText message={error.value} />
      {list.value && (
        <>
          <p>{t.owner(list.value.userId)}</p>
          <ul>
            {list.value.content.map((c, i) => (
              <li key={`${c.item}-${i}`}>{c.item}</li>
            ))}
          </ul>
        </>
      )}
    </Page>
  );
}
