/** Something the person reorders: a stable id, so a moved row keeps its state and focus. */
export interface Listed {
  uid: string;
}

/** The list with the item at `from` moved to `to` (both clamped to the list). */
export function moveTo<T>(list: readonly T[], from: number, to: number): T[] {
  const target = Math.max(0, Math.min(list.length - 1, to));
  if (from === target || from < 0 || from >= list.length) return [...list];
  const next = [...list];
  const [item] = next.splice(from, 1);
  next.splice(target, 0, item!);
  return next;
}

/** The list with the item at `index` moved `by` places (negative: up). */
export const moveBy = <T>(list: readonly T[], index: number, by: number): T[] => moveTo(list, index, index + by);

/**
 * The selected items moved one place up (by -1) or down (by 1) together: each steps over the
 * unselected neighbour in its way; a block at the end stays. The others keep their order.
 */
export function moveSelected<T>(list: readonly T[], selected: (item: T) => boolean, by: -1 | 1): T[] {
  const next = [...list];
  const indexes = by < 0 ? next.map((_, i) => i) : next.map((_, i) => next.length - 1 - i);
  for (const i of indexes) {
    const j = i + by;
    if (j < 0 || j >= next.length || !selected(next[i]!) || selected(next[j]!)) continue;
    [next[i], next[j]] = [next[j]!, next[i]!];
  }
  return next;
}
