import { useSignal } from '@preact/signals';
import { Cover } from '../../design/cover.js';
import { messages } from '../../messages.js';
import type { KnownCard } from './known-cards.js';
import './wishlists.css';

const t = messages.wishlistPicker;

/**
 * A card picked by its title: the WAI-ARIA combobox with a listbox popup (APG "list
 * autocomplete"): typing filters the cards, Arrow keys move the active option, Enter picks it,
 * Escape closes the list. Each option shows the card's cover and title; no id is typed or shown.
 */
export function CardPicker({ id, cards, onPick }: { id: string; cards: readonly KnownCard[]; onPick: (card: KnownCard) => void }) {
  const query = useSignal('');
  const open = useSignal(false);
  const active = useSignal(0);
  const words = query.value.trim().toLocaleLowerCase();
  const shown = cards.filter((c) => c.title.toLocaleLowerCase().includes(words));
  const at = Math.min(active.value, shown.length - 1);
  const listId = `${id}-list`;
  const optionId = (n: number): string => `${id}-option-${n}`;
  const pick = (card: KnownCard | undefined): void => {
    if (!card) return;
    onPick(card);
    query.value = '';
    open.value = false;
    active.value = 0;
  };
  const expanded = open.value && shown.length > 0;
  return (
    <div class="card-picker">
      <label for={id}>{t.label}</label>
      <input
        id={id}
        type="text"
        role="combobox"
        autocomplete="off"
        aria-autocomplete="list"
        aria-expanded={expanded}
        aria-controls={listId}
        aria-activedescendant={expanded && at >= 0 ? optionId(at) : undefined}
        aria-describedby={`${id}-hint`}
        value={query.value}
        onInput={(e) => {
          query.value = e.currentTarget.value;
          open.value = true;
          active.value = 0;
        }}
        onFocus={() => (open.value = true)}
        onBlur={() => (open.value = false)}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
            e.preventDefault();
            if (!open.value) open.value = true;
            else if (shown.length > 0) active.value = (at + (e.key === 'ArrowDown' ? 1 : shown.length - 1)) % shown.length;
          } else if (e.key === 'Enter') {
            e.preventDefault();
            if (expanded) pick(shown[at]);
          } else if (e.key === 'Escape') {
            open.value = false;
          }
        }}
      />
      <p id={`${id}-hint`} class="hint">
        {cards.length === 0 ? t.noCards : t.hint}
      </p>
      <div id={listId} role="listbox" aria-label={t.label} class="card-options" hidden={!expanded}>
        {/* Options only while open: hidden ones would hold lazy cover images that never load. */}
        {expanded && shown.map((card, n) => (
          <div
            key={card.cardId}
            id={optionId(n)}
            role="option"
            tabIndex={-1}
            aria-selected={n === at}
            class={n === at ? 'active' : undefined}
            // Pressed before the input's blur closes the list.
            onMouseDown={(e) => {
              e.preventDefault();
              pick(card);
            }}
          >
            <span class="wish-cover" aria-hidden="true">
              <Cover cardId={card.cardId} title={card.title} src={card.cover} />
            </span>
            <span class="option-title">{card.title}</span>
          </div>
        ))}
      </div>
      {open.value && words !== '' && shown.length === 0 && <p class="hint">{t.noMatch(query.value.trim())}</p>}
    </div>
  );
}
