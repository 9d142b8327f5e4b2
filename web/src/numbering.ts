/** The placeholder a bulk rename's pattern numbers: "Part {n}" gives "Part 1", "Part 2", … */
export const NUMBER_PLACEHOLDER = '{n}';

/**
 * Titles for `count` items from a pattern, numbered from `start`. Every placeholder takes the
 * number; a pattern without one gets it at the end, so the titles stay told apart.
 */
export function numberedTitles(pattern: string, start: number, count: number): string[] {
  const base = pattern.trim();
  const withNumber = base.includes(NUMBER_PLACEHOLDER) ? base : `${base} ${NUMBER_PLACEHOLDER}`.trim();
  const first = Number.isSafeInteger(start) ? start : 1;
  return Array.from({ length: count }, (_, i) => withNumber.split(NUMBER_PLACEHOLDER).join(String(first + i)));
}
