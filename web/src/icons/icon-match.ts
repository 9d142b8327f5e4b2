/**
 * The word rules of the icon picker, in one place: which icons a search finds and which a
 * track's title suggests. An icon is found by its title's words and its tags.
 */

export interface Matchable {
  title: string;
  tags: readonly string[];
}

/** Words too common in titles to say what a track is about. */
const COMMON = new Set(
  'the and for with from into onto over under your our my his her its their this that part chapter track song story tale side one two three four five six seven eight nine ten little big new old'.split(' '),
);

/** Lower-case words of letters and digits, in any script ("Grandma's Owl" -> grandma, s, owl). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** One form for singular and plural, so that "Bears" suggests "Bear" and "stories" finds "story". */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

function iconWords(icon: Matchable): string[] {
  return [...words(icon.title), ...icon.tags.flatMap(words)];
}

/** Whether every word of the search begins a word of the icon's title or tags; an empty search finds all. */
export function matchesSearch(icon: Matchable, search: string): boolean {
  const wanted = words(search);
  if (wanted.length === 0) return true;
  const own = iconWords(icon);
  return wanted.every((w) => own.some((o) => o.startsWith(w) || stem(o) === stem(w)));
}

/**
 * The icons a title suggests, best first: those sharing the most of the title's meaningful words
 * (whole words, singular or plural, not the common ones), in the list's order among equals.
 */
export function suggestIcons<T extends Matchable>(title: string | undefined, icons: readonly T[], limit = 8): T[] {
  const wanted = new Set(words(title ?? '').filter((w) => w.length > 2 && !COMMON.has(w) && !/^\d+$/.test(w)).map(stem));
  if (wanted.size === 0) return [];
  return icons
    .map((icon, order) => ({ icon, order, score: new Set(iconWords(icon).map(stem).filter((w) => wanted.has(w))).size }))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, limit)
    .map((s) => s.icon);
}
