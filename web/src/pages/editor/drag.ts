import type { TrackAt } from '../../reorder.js';

/** What a drag carries when a chapter or a track is dragged (not files). */
export const CHAPTER_DRAG = 'text/x-cardshelf-chapter';
export const TRACK_DRAG = 'text/x-cardshelf-track';

/** A dragged track's place, as its drag carries it ("chapter:track"). */
export function trackFrom(data: string | undefined): TrackAt | undefined {
  const [, chapter, track] = /^(\d+):(\d+)$/.exec(data ?? '') ?? [];
  return chapter === undefined || track === undefined ? undefined : { chapter: Number(chapter), track: Number(track) };
}
