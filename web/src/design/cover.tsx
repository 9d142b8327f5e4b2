import { messages } from '../messages.js';

/** How many colours generated covers choose from (--cover-0 to --cover-7 in tokens.css). */
export const COVER_COLOURS = 8;

/**
 * A card's colour among the generated covers': the same card always the same colour, from its id
 * (FNV-1a, spread well enough for 8 buckets; a card's title changes, its id never does).
 */
export function coverColour(cardId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < cardId.length; i++) {
    hash ^= cardId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % COVER_COLOURS;
}

/**
 * What a generated cover shows: the initials of the title's first two words that start with a
 * letter (track numbers and punctuation are no one's initial), else its first characters.
 */
export function coverInitials(title: string): string {
  const words = title.trim().split(/\s+/).filter(Boolean);
  const lettered = words.filter((w) => /^\p{L}/u.test(w));
  const picked = (lettered.length ? lettered : words).slice(0, 2);
  // Array.from: by code point, so an accented or non-Latin first letter stays whole.
  const initials = picked.map((w) => Array.from(w)[0] ?? '').join('');
  return initials.toLocaleUpperCase() || '♪';
}

/**
 * A card's cover: its image, or until one is chosen a generated one (initials on a colour), drawn
 * in CSS, not fetched. The generated one is decoration beside the title that names the card.
 */
export function Cover({ cardId, title, src, class: className }: { cardId: string; title: string; src?: string | undefined; class?: string }) {
  const classes = `cover-tile${className ? ` ${className}` : ''}`;
  if (src) return <img class={classes} src={src} alt={messages.cards.cover(title)} loading="lazy" decoding="async" />;
  return (
    <div class={`${classes} cover-generated cover-colour-${coverColour(cardId)}`} aria-hidden="true" data-testid="generated-cover">
      <span>{coverInitials(title)}</span>
    </div>
  );
}
