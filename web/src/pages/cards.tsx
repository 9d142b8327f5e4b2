import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, coverOf, errorMessage, type CardSummary as Card } from '../api.js';
import { Cover } from '../design/cover.js';
import { useLiveEvents } from '../events.js';
import { formatDuration, formatSize } from '../format.js';
import { messages } from '../messages.js';
import { navigate } from '../router.js';
import { cardsBytes } from '../storage.js';
import { ErrorText, Link, Page, Status } from '../ui.js';

const t = messages.cards;
/** A deleted card can be brought back for this long; then the DELETE is sent. */
const UNDO_MS = 10_000;

interface PendingDelete {
  card: Card;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Deletes wait for their undo time; a page closed meanwhile still sends them (keepalive), so
 * what the person saw deleted is deleted.
 */
const pending = new Map<string, PendingDelete>();
addEventListener('pagehide', () => {
  for (const [cardId, { timer }] of pending) {
    clearTimeout(timer);
    void api.DELETE('/content/{cardId}', { params: { path: { cardId } }, keepalive: true });
  }
  pending.clear();
});

export function CardsPage() {
  const cards = useSignal<Card[] | undefined>(undefined);
  const query = useSignal('');
  const error = useSignal<string | undefined>(undefined);
  const undoable = useSignal<Card | undefined>(undefined);

  const load = () =>
    api.GET('/content/mine').then(({ data, error: e, response }) => {
      if (data) cards.value = data.cards.filter((c) => !pending.has(c.cardId ?? ''));
      else error.value = errorMessage(e, response);
    });
  useEffect(() => void load(), []);
  // My cards changed elsewhere (another tab or device); card events of other members are cheap to refetch for.
  useLiveEvents(['card.'], load);

  const remove = (card: Card) => {
    const cardId = card.cardId;
    cards.value = cards.value?.filter((c) => c.cardId !== cardId);
    undoable.value = card;
    const timer = setTimeout(() => {
      pending.delete(cardId);
      if (undoable.value?.cardId === cardId) undoable.value = undefined;
      void api.DELETE('/content/{cardId}', { params: { path: { cardId } } }).then(({ error: e, response }) => {
        if (e) error.value = errorMessage(e, response);
      });
    }, UNDO_MS);
    pending.set(cardId, { card, timer });
  };
  const undo = () => {
    const card = undoable.value;
    if (!card) return;
    const entry = pending.get(card.cardId);
    if (entry) clearTimeout(entry.timer);
    pending.delete(card.cardId);
    cards.value = [card, ...(cards.value ?? [])];
    undoable.value = undefined;
  };

  const needle = query.value.trim().toLocaleLowerCase();
  const shown = (cards.value ?? []).filter((c) => !needle || c.title.toLocaleLowerCase().includes(needle));
  return (
    <Page title={t.title}>
      <div class="toolbar">
        <button type="button" class="primary" onClick={() => navigate('/cards/new')}>
          {t.make}
        </button>
        <label for="card-search">{t.search}</label>
        <input id="card-search" type="search" value={query.value} onInput={(e) => (query.value = e.currentTarget.value)} />
      </div>
      <ErrorText message={error.value} />
      <Status>
        {undoable.value ? (
          <>
            {t.removed(undoable.value.title)}{' '}
            <button type="button" onClick={undo}>
              {t.undo}
            </button>
          </>
        ) : cards.value ? (
          messages.words.cards(shown.length)
        ) : (
          messages.common.loading
        )}
      </Status>
      {cards.value && cards.value.length > 0 && (
        <p class="storage">
          <data value={String(cardsBytes(cards.value))}>{messages.words.storage(formatSize(cardsBytes(cards.value)))}</data>
        </p>
      )}
      {cards.value && shown.length === 0 && <p>{cards.value.length ? t.noMatch : t.none}</p>}
      <ul class="cards">
        {shown.map((card) => (
          <li key={card.cardId} class="card">
            <Cover cardId={card.cardId} title={card.title} src={coverOf(card)} />
            <div class="card-body">
              <h2>{card.title}</h2>
              <CardMeta card={card} />
              <div class="actions">
                <Link to={`/play/${encodeURIComponent(card.cardId)}`} class="button">
                  <span aria-hidden="true">▶ </span>
                  {messages.player.play}
                  <span class="visually-hidden"> {card.title}</span>
                </Link>
                <Link to={`/cards/${encodeURIComponent(card.cardId)}`} class="button">
                  {messages.common.edit}
                  <span class="visually-hidden"> {card.title}</span>
                </Link>
                <button type="button" onClick={() => remove(card)} aria-label={t.remove(card.title)}>
                  {messages.common.delete}
                </button>
              </div>
            </div>
          </li>
        ))}
      </ul>
    </Page>
  );
}

/** What a card is and how long it plays, in words: "Stories, 3m 12s". */
function CardMeta({ card }: { card: Card }) {
  const category = card.metadata?.category;
  const duration = card.metadata?.media?.duration;
  const parts = [category && category !== 'none' ? (messages.words.categories[category] ?? category) : '', duration ? formatDuration(duration) : ''].filter(Boolean);
  return parts.length ? <p class="meta">{parts.join(' · ')}</p> : null;
}
