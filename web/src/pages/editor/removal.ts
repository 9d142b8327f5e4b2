import { messages } from '../../messages.js';
import type { TrackAt } from '../../reorder.js';
import { setChapters, type EditChapter, type EditorState } from './state.js';

const t = messages.cardEditor;

/** The focus after an undo: the title of what came back (rendered by then: the next frame). */
const focusLater = (id: string): void => void requestAnimationFrame(() => document.getElementById(id)?.focus());

/**
 * Deletes one track of a chapter; its Undo puts it back at the same place in that chapter, or (the
 * chapter gone meanwhile) as a chapter of its own where the chapter was.
 */
export function removeTrack(state: EditorState, at: TrackAt): void {
  const chapter = state.chapters.value[at.chapter];
  const track = chapter?.tracks[at.track];
  if (!chapter || !track) return;
  setChapters(
    state,
    state.chapters.value.map((c, i) => (i === at.chapter ? { ...c, tracks: c.tracks.filter((_, j) => j !== at.track) } : c)).filter((c) => c.tracks.length > 0),
  );
  state.removed.value = {
    message: t.trackDeleted(track.title || messages.editor.trackTitle(at.track + 1, at.chapter + 1)),
    undo: () => {
      const now = state.chapters.value;
      if (now.some((c) => c.uid === chapter.uid)) {
        setChapters(state, now.map((c) => (c.uid === chapter.uid ? { ...c, tracks: [...c.tracks.slice(0, at.track), track, ...c.tracks.slice(at.track)] } : c)));
      } else {
        setChapters(state, [...now.slice(0, at.chapter), { ...chapter, tracks: [track] }, ...now.slice(at.chapter)]);
      }
      focusLater(`track-${track.uid}`);
    },
  };
}

/** Deletes the chapters at these places; their Undo puts each back where it was. */
export function removeChapters(state: EditorState, indexes: number[]): void {
  const gone = indexes
    .map((index) => ({ index, chapter: state.chapters.value[index] }))
    .filter((g): g is { index: number; chapter: EditChapter } => g.chapter !== undefined)
    .sort((a, b) => a.index - b.index);
  if (gone.length === 0) return;
  const uids = new Set(gone.map((g) => g.chapter.uid));
  setChapters(state, state.chapters.value.filter((c) => !uids.has(c.uid)));
  state.selected.value = new Set([...state.selected.value].filter((uid) => !uids.has(uid)));
  const [first] = gone;
  state.removed.value = {
    message: gone.length === 1 && first ? t.chapterDeleted(first.chapter.title || String(first.index + 1)) : t.chaptersDeleted(gone.length),
    undo: () => {
      // In the order they were: each index is its place once those before it are back.
      let next = state.chapters.value.filter((c) => !uids.has(c.uid));
      for (const { index, chapter } of gone) next = [...next.slice(0, index), chapter, ...next.slice(index)];
      setChapters(state, next);
      if (first) focusLater(`title-${first.chapter.uid}`);
    },
  };
}
