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

/** Where a track sits: its chapter's place and its own place in that chapter. */
export interface TrackAt {
  chapter: number;
  track: number;
}

/**
 * The chapters with one track moved from `from` to `to`, in the same chapter or another (`to.track`
 * is its place there once moved, clamped). A chapter the move leaves without tracks goes: a card's
 * chapter is something to play.
 */
export function moveTrack<T, C extends { tracks: readonly T[] }>(chapters: readonly C[], from: TrackAt, to: TrackAt): C[] {
  const source = chapters[from.chapter];
  const track = source?.tracks[from.track];
  if (!source || track === undefined || !chapters[to.chapter]) return [...chapters];
  if (from.chapter === to.chapter) return chapters.map((c, i) => (i === from.chapter ? { ...c, tracks: moveTo(c.tracks, from.track, to.track) } : c));
  const next = chapters.map((c, i) => {
    if (i === from.chapter) return { ...c, tracks: c.tracks.filter((_, j) => j !== from.track) };
    if (i !== to.chapter) return c;
    const at = Math.max(0, Math.min(c.tracks.length, to.track));
    return { ...c, tracks: [...c.tracks.slice(0, at), track, ...c.tracks.slice(at)] };
  });
  return next.filter((c) => c.tracks.length > 0);
}

/**
 * Where a track moved one place up (by -1) or down (by 1) goes: a place over in its chapter, or past
 * the chapter's edge to the end of the chapter before or the start of the chapter after. Undefined at
 * the card's first and last place.
 */
export function trackStep(chapters: readonly { tracks: readonly unknown[] }[], at: TrackAt, by: -1 | 1): TrackAt | undefined {
  const count = chapters[at.chapter]?.tracks.length ?? 0;
  const within = at.track + by;
  if (within >= 0 && within < count) return { chapter: at.chapter, track: within };
  const neighbour = chapters[at.chapter + by];
  if (!neighbour) return undefined;
  return { chapter: at.chapter + by, track: by < 0 ? neighbour.tracks.length : 0 };
}
