// What a generated cover shows, worked out from the card alone (web/src/design/cover.tsx draws it).

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
