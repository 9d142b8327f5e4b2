import { messages } from '../messages.js';
import { coverColour, coverInitials } from './cover-art.js';

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
