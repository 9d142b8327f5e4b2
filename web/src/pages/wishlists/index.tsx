import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useActions } from '../../actions.js';
import { api, errorMessage, type SharedWishlist, type Wishlist } from '../../api.js';
import { Cover } from '../../design/cover.js';
import { messages } from '../../messages.js';
import { ErrorText, Page, Status } from '../../ui.js';
import { CardPicker } from './card-picker.js';
import { useCardsNamed, usePickableCards, type KnownCard } from './known-cards.js';
import './wishlists.css';

const t = messages.wishlists;
const w = messages.wishlistPicker;
export const shareLink = (shareId: string): string => `${location.origin}/app/shared/${encodeURIComponent(shareId)}`;

export function WishlistsPage() {
  const lists = useSignal<Wishlist[] | undefined>(undefined);
  const newName = useSignal('');
  const cards = usePickableCards();
  const { error, status, act } = useActions(() => load());
  const load = async () => {
    const { data, error: e, response } = await api.GET('/wishlists', { params: { query: { format: 'raw' } } });
    if (data) lists.value = data.wishlists;
    else error.value = errorMessage(e, response);
  };
  useEffect(() => void load(), []);
  // A PUT carries the name the page shows, so a rename and an item never undo each other.
  const put = (list: Wishlist, items: string[], name = list.name ?? null) =>
    act(api.PUT('/wishlists/{wishlistId}', { params: { path: { wishlistId: list.wishlistId } }, body: { name, content: items.map((item) => ({ item })) } }), messages.common.saved);

  return (
    <Page title={t.title}>
      <ErrorText message={error.value} />
      <Status>{status.value}</Status>
      <form
        class="wish-name"
        onSubmit={(e) => {
          e.preventDefault();
          void act(api.POST('/wishlists', { body: { name: newName.value, content: [] } }), messages.common.saved).then((done) => {
            if (done) newName.value = '';
          });
        }}
      >
        <div>
          <label for="new-wishlist-name">{w.newName}</label>
          <input id="new-wishlist-name" maxLength={100} value={newName.value} onInput={(e) => (newName.value = e.currentTarget.value)} />
        </div>
        <button type="submit" class="primary">
          {t.create}
        </button>
      </form>
      {lists.value?.length === 0 && <p>{t.none}</p>}
      <ul class="wishlists">
        {lists.value?.map((list, n) => (
          <WishlistRow
            key={list.wishlistId}
            list={list}
            n={n + 1}
            cards={cards.value}
            onItems={(items) => void put(list, items)}
            onName={(name) => void put(list, list.content.map((c) => c.item), name)}
            onDelete={() => void act(api.DELETE('/wishlists/{wishlistId}', { params: { path: { wishlistId: list.wishlistId } } }), messages.common.saved)}
            onCopied={(message) => (status.value = message)}
          />
        ))}
      </ul>
    </Page>
  );
}

function WishlistRow(props: {
  list: Wishlist;
  n: number;
  cards: KnownCard[] | undefined;
  onItems: (items: string[]) => void;
  onName: (name: string) => void;
  onDelete: () => void;
  onCopied: (message: string) => void;
}) {
  const { list, n, cards, onItems, onName, onDelete, onCopied } = props;
  const items = list.content.map((c) => c.item);
  const name = useSignal(list.name ?? '');
  useEffect(() => void (name.value = list.name ?? ''), [list.name]);
  const link = shareLink(list.shareId);
  const id = list.wishlistId;
  return (
    <li class="wishlist">
      <h2>{w.heading(list.name ?? w.untitled(n), messages.words.cards(items.length))}</h2>
      <form
        class="wish-name"
        onSubmit={(e) => {
          e.preventDefault();
          onName(name.value);
        }}
      >
        <div>
          <label for={`name-${id}`}>{w.name}</label>
          <input id={`name-${id}`} maxLength={100} value={name.value} onInput={(e) => (name.value = e.currentTarget.value)} />
        </div>
        <button type="submit">{w.rename}</button>
      </form>
      <WishItems items={items} cards={cards} onRemove={(i) => onItems(items.filter((_, j) => j !== i))} />
      <CardPicker id={`pick-${id}`} cards={cards ?? []} onPick={(card) => onItems([...items, card.cardId])} />
      <div class="toolbar">
        <label for={`link-${id}`}>{t.shareLink}</label>
        <input id={`link-${id}`} readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
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

/** A wishlist's items by title and cover; one that cannot be read says so, never its id. */
function WishItems({ items, cards, onRemove }: { items: string[]; cards: KnownCard[] | undefined; onRemove?: (i: number) => void }) {
  const named = useCardsNamed(items, cards);
  if (items.length === 0) return <p>{w.empty}</p>;
  return (
    <ul class="wish-items">
      {items.map((cardId, i) => {
        const card = named.get(cardId);
        const title = card === undefined ? w.loading : card === null ? w.gone : card.title;
        return (
          <li key={`${cardId}-${i}`} class="item">
            <span class="wish-cover">
              {card ? <Cover cardId={cardId} title={card.title} src={card.cover} /> : <Cover cardId={cardId} title="?" />}
            </span>
            <span class={card === null ? 'item-title gone' : 'item-title'}>{title}</span>
            {onRemove && (
              <button type="button" aria-label={w.removeItem(title)} onClick={() => onRemove(i)}>
                ✕
              </button>
            )}
          </li>
        );
      })}
    </ul>
  );
}

/** A wishlist someone shared: read-only, for a signed-in person, named by its owner's name. */
export function SharedWishlistPage({ shareId }: { shareId: string }) {
  const list = useSignal<SharedWishlist | undefined>(undefined);
  const error = useSignal<string | undefined>(undefined);
  const cards = usePickableCards();
  useEffect(() => {
    void api.GET('/wishlists/shared/{shareId}', { params: { path: { shareId } } }).then(({ data, error: e, response }) => {
      if (data) list.value = data;
      else error.value = errorMessage(e, response);
    });
  }, [shareId]);
  const owner = list.value?.ownerName;
  return (
    <Page title={list.value ? (owner ? w.ownersWishlist(owner) : w.someonesWishlist) : t.shared}>
      <ErrorText message={error.value} />
      {list.value && (
        <>
          {list.value.name && <h2>{list.value.name}</h2>}
          <WishItems items={list.value.content.map((c) => c.item)} cards={cards.value} />
        </>
      )}
    </Page>
  );
}
