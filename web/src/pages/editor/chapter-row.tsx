import type { RefObject } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { formatDuration } from '../../format.js';
import { messages } from '../../messages.js';
import { moveBy, moveTo, moveTrack, trackStep, type TrackAt } from '../../reorder.js';
import { CHAPTER_DRAG, TRACK_DRAG, trackFrom } from './drag.js';
import { IconPicker } from '../../icons/icon-picker.js';
import { removeChapters, removeTrack } from './removal.js';
import { SAVE_FAILURE_ID, setChapters, updateChapter, useEditor, type EditChapter, type EditorState, type EditTrack } from './state.js';

const t = messages.editor;

/** Alt+Arrow Up/Down on a row's field or handle: the row's keyboard move. */
const altArrow = (e: KeyboardEvent, move: (by: -1 | 1) => void): void => {
  if (!e.altKey || (e.key !== 'ArrowUp' && e.key !== 'ArrowDown')) return;
  e.preventDefault();
  move(e.key === 'ArrowUp' ? -1 : 1);
};

/**
 * After a keyboard move, the moved row's element keeps the focus (the row is rendered in its new
 * place). A layout effect, run as the move is rendered: a plain effect waits for the next frame, and
 * a key pressed before it (a quick second Alt+Arrow) went to the page, the moved row having lost the focus.
 */
function useFocusWhenMoved<T extends HTMLElement>(state: EditorState, uid: string): RefObject<T | null> {
  const element = useRef<T>(null);
  useLayoutEffect(() => {
    if (state.moved.uid !== uid) return;
    element.current?.focus();
    state.moved.uid = undefined;
  });
  return element;
}

const moveTrackIn = (state: EditorState, from: TrackAt, to: TrackAt): void => setChapters(state, moveTrack(state.chapters.value, from, to));

/** A chapter: its title, icon, moves, split and merge, and its tracks when it has more than one. */
export function ChapterRow({ chapter, index }: { chapter: EditChapter; index: number }) {
  const state = useEditor();
  const count = state.chapters.value.length;
  const n = index + 1;
  const name = chapter.title || `${n}`;
  const handle = useFocusWhenMoved<HTMLButtonElement>(state, chapter.uid);
  const move = (by: number): void => {
    state.moved.uid = chapter.uid;
    setChapters(state, moveBy(state.chapters.value, index, by));
  };
  const toggle = (): void => {
    const next = new Set(state.selected.value);
    if (next.has(chapter.uid)) next.delete(chapter.uid);
    else next.add(chapter.uid);
    state.selected.value = next;
  };
  const split = (): void =>
    setChapters(state, state.chapters.value.flatMap((c, j) => (j === index ? c.tracks.map((tr) => ({ uid: state.nextUid(), title: tr.title, icon: c.icon, tracks: [tr], stored: {} })) : [c])));
  const merge = (): void => {
    const chapters = state.chapters.value;
    const next = chapters[index + 1];
    if (next) setChapters(state, [...chapters.slice(0, index), { ...chapter, tracks: [...chapter.tracks, ...next.tracks] }, ...chapters.slice(index + 2)]);
  };
  const duration = chapter.tracks.reduce((s, tr) => s + (tr.stored.duration ?? 0), 0);
  return (
    // Dragging is the mouse's way to reorder; the move buttons and Alt+Arrow keys are the keyboard's.
    // eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions
    <li
      class="chapter"
      draggable
      data-testid={`chapter-${n}`}
      onDragStart={(e) => {
        e.dataTransfer?.setData(CHAPTER_DRAG, String(index));
      }}
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        const from = e.dataTransfer?.getData(CHAPTER_DRAG);
        // A track dropped on the chapter (not on one of its tracks) goes to its end.
        const track = trackFrom(e.dataTransfer?.getData(TRACK_DRAG));
        if (!from && !track) return;
        e.preventDefault();
        e.stopPropagation();
        if (track) moveTrackIn(state, track, { chapter: index, track: chapter.tracks.length });
        else setChapters(state, moveTo(state.chapters.value, Number(from), index));
      }}
    >
      <div class="row">
        <input id={`select-${chapter.uid}`} type="checkbox" checked={state.selected.value.has(chapter.uid)} onChange={toggle} aria-label={t.select(name)} />
        <span class="number" aria-hidden="true">
          {n}
        </span>
        <label for={`title-${chapter.uid}`} class="visually-hidden">
          {t.chapterTitle(n)}
        </label>
        <input
          id={`title-${chapter.uid}`}
          aria-invalid={state.refused.value === `content/chapters/${index}/title` || undefined}
          aria-describedby={state.refused.value === `content/chapters/${index}/title` ? SAVE_FAILURE_ID : undefined}
          value={chapter.title} onInput={(e) => updateChapter(state, index, { title: e.currentTarget.value })} onKeyDown={(e) => altArrow(e, move)} />
        <span class="meta">{formatDuration(duration)}</span>
        <IconPicker label={t.icon(name)} value={chapter.icon ?? undefined} suggestFor={chapter.title} onChange={(icon) => updateChapter(state, index, { icon: icon ?? null })} />
        <span class="actions">
          <button type="button" ref={handle} disabled={index === 0} onClick={() => move(-1)} aria-label={messages.common.moveUp(name)} onKeyDown={(e) => altArrow(e, move)}>
            ↑
          </button>
          <button type="button" disabled={index === count - 1} onClick={() => move(1)} aria-label={messages.common.moveDown(name)}>
            ↓
          </button>
          {chapter.tracks.length > 1 && (
            <button type="button" onClick={split} aria-label={t.split(name)}>
              {t.splitShort}
            </button>
          )}
          {index < count - 1 && (
            <button type="button" onClick={merge} aria-label={t.mergeNext(name)}>
              {t.mergeShort}
            </button>
          )}
          <button type="button" onClick={() => removeChapters(state, [index])} aria-label={messages.common.remove(name)}>
            ✕
          </button>
        </span>
      </div>
      {chapter.tracks.length > 1 && (
        <ol class="tracks">
          {chapter.tracks.map((track, j) => (
            <TrackRow key={track.uid} chapter={chapter} at={{ chapter: index, track: j }} track={track} />
          ))}
        </ol>
      )}
    </li>
  );
}

/** A track of a chapter of several: its title, icon and moves. */
function TrackRow({ chapter, at, track }: { chapter: EditChapter; at: TrackAt; track: EditTrack }) {
  const state = useEditor();
  const n = at.chapter + 1;
  const j = at.track;
  const input = useFocusWhenMoved<HTMLInputElement>(state, track.uid);
  const refused = state.refused.value === `content/chapters/${at.chapter}/tracks/${j}/title`;
  const change = (next: EditTrack): void => updateChapter(state, at.chapter, { tracks: chapter.tracks.map((tr, k) => (k === j ? next : tr)) });
  const step = (by: -1 | 1): void => {
    const to = trackStep(state.chapters.value, at, by);
    if (!to) return;
    state.moved.uid = track.uid;
    moveTrackIn(state, at, to);
  };
  return (
    // As chapters: dragged by the mouse, moved by the buttons and Alt+Arrow keys.
    // eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions
    <li
      draggable
      data-testid={`track-${n}-${j + 1}`}
      onDragStart={(e) => {
        // Not the chapter's drag too (the row is inside the chapter's).
        e.stopPropagation();
        e.dataTransfer?.setData(TRACK_DRAG, `${at.chapter}:${j}`);
      }}
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        const from = trackFrom(e.dataTransfer?.getData(TRACK_DRAG));
        if (!from) return;
        e.preventDefault();
        e.stopPropagation();
        moveTrackIn(state, from, at);
      }}
    >
      <span class="number" aria-hidden="true">
        {j + 1}
      </span>
      <label for={`track-${track.uid}`} class="visually-hidden">
        {t.trackTitle(j + 1, n)}
      </label>
      <input
        id={`track-${track.uid}`}
        ref={input}
        aria-invalid={refused || undefined}
        aria-describedby={refused ? SAVE_FAILURE_ID : undefined}
        value={track.title} onInput={(e) => change({ ...track, title: e.currentTarget.value })} onKeyDown={(e) => altArrow(e, step)} />
      <span class="meta">{formatDuration(track.stored.duration ?? 0)}</span>
      <IconPicker
        label={t.icon(track.title || t.trackTitle(j + 1, n))}
        value={track.stored.display?.icon16x16 ?? undefined}
        suggestFor={track.title}
        onChange={(icon) => change({ ...track, stored: { ...track.stored, display: { ...track.stored.display, icon16x16: icon ?? null } } })}
      />
      <button type="button" disabled={j === 0} onClick={() => updateChapter(state, at.chapter, { tracks: moveBy(chapter.tracks, j, -1) })} aria-label={messages.common.moveUp(track.title)}>
        ↑
      </button>
      <button type="button" disabled={j === chapter.tracks.length - 1} onClick={() => updateChapter(state, at.chapter, { tracks: moveBy(chapter.tracks, j, 1) })} aria-label={messages.common.moveDown(track.title)}>
        ↓
      </button>
      <button type="button" onClick={() => removeTrack(state, at)} aria-label={messages.cardEditor.deleteTrack(track.title || t.trackTitle(j + 1, n))}>
        ✕
      </button>
    </li>
  );
}
