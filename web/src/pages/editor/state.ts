import { computed, signal, type ReadonlySignal, type Signal } from '@preact/signals';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { coverOf, type Card, type CardDraft, type Chapter, type Track } from '../../api.js';
import { titleFromFileName } from '../../file-titles.js';
import type { Transcoded, Upload } from '../../uploads.js';
import type { Listed } from '../../reorder.js';

export interface EditTrack extends Listed {
  title: string;
  /** The stored track, so fields the editor does not show survive a save. */
  stored: Track;
}
export interface EditChapter extends Listed {
  title: string;
  icon: string | null;
  tracks: EditTrack[];
  stored: Partial<Chapter>;
}

/** One editor's state: made once per page (no state outlives it), shared with its parts by context. */
export interface EditorState {
  card: Signal<CardDraft | undefined>;
  /** The tag of the version read or last saved: the next save is made on it. */
  etag: Signal<string | undefined>;
  title: Signal<string>;
  description: Signal<string>;
  category: Signal<string>;
  languages: Signal<string>;
  cover: Signal<string | undefined>;
  chapters: Signal<EditChapter[]>;
  /** The chapters chosen for a bulk action, by uid. */
  selected: Signal<Set<string>>;
  layout: Signal<'perFile' | 'oneChapter'>;
  uploads: Signal<Upload[]>;
  /** The chapter each upload's batch fills (one chapter of many tracks), by upload id. */
  targets: Map<number, string | undefined>;
  /**
   * After a keyboard move, the uid of the moved row: its handle (or title) takes the focus as the
   * row is rendered in its new place.
   */
  moved: { uid: string | undefined };
  /** A stable id for a new chapter or track, unique in this editor. */
  nextUid: () => string;
  /** The last deletion, until undone, replaced by the next, or saved: its Undo puts it back. */
  removed: Signal<Removal | undefined>;
  /** The body path of the field the server refused at the last save (`title`, `content/chapters/0/title`). */
  refused: Signal<string | undefined>;
  /** The edited fields as last read or saved (`edits`): what "unsaved" is measured against. */
  baseline: Signal<string>;
  /** Edits not saved yet, or files still uploading: leaving would lose them. */
  unsaved: ReadonlySignal<boolean>;
}

/** A deletion that can be undone: what it says, and how it puts back what went. */
export interface Removal {
  message: string;
  undo: () => void;
}

export function createEditorState(isNew: boolean): EditorState {
  let uid = 0;
  const state: Omit<EditorState, 'unsaved'> = {
    card: signal(isNew ? { title: '' } : undefined),
    etag: signal(undefined),
    title: signal(''),
    description: signal(''),
    category: signal(''),
    languages: signal(''),
    cover: signal(undefined),
    chapters: signal([]),
    selected: signal(new Set()),
    layout: signal('perFile'),
    uploads: signal([]),
    targets: new Map(),
    moved: { uid: undefined },
    nextUid: () => `u${++uid}`,
    removed: signal(undefined),
    refused: signal(undefined),
    baseline: signal(''),
  };
  state.baseline.value = edits(state);
  const busy = (u: Upload): boolean => !['done', 'failed'].includes(u.phase.value);
  const unsaved = computed(() => edits(state) !== state.baseline.value || state.uploads.value.some(busy));
  return { ...state, unsaved };
}

/** What the person edits, as one string: equal strings, the same card to save. */
export const edits = (state: Omit<EditorState, 'unsaved'>): string =>
  JSON.stringify([state.title.value.trim(), state.description.value, state.category.value, state.languages.value, state.cover.value ?? '', toStored(state.chapters.value)]);

/** The id of the save's failure message, which a refused field is described by. */
export const SAVE_FAILURE_ID = 'save-failure';

export const EditorContext = createContext<EditorState | undefined>(undefined);

/** The editor's state, for its parts (rendered inside EditorPage's provider only). */
export function useEditor(): EditorState {
  const state = useContext(EditorContext);
  if (!state) throw new Error('an editor part outside the editor');
  return state;
}

/** The card as the editor shows it: its fields, and its chapters with new uids. */
export function showCard(state: EditorState, read: Card, tag: string | null): void {
  state.card.value = read;
  state.etag.value = tag ?? undefined;
  state.title.value = read.title;
  state.description.value = read.metadata?.description ?? '';
  state.category.value = read.metadata?.category ?? '';
  state.languages.value = (read.metadata?.languages ?? []).join(', ');
  state.cover.value = coverOf(read);
  state.chapters.value = (read.content?.chapters ?? []).map((c) => ({
    uid: state.nextUid(),
    title: c.title ?? '',
    icon: c.display?.icon16x16 ?? null,
    stored: c,
    tracks: c.tracks.map((tr) => ({ uid: state.nextUid(), title: tr.title ?? '', stored: tr })),
  }));
  state.selected.value = new Set();
  state.removed.value = undefined;
  state.refused.value = undefined;
  state.baseline.value = edits(state);
}

export const setChapters = (state: EditorState, next: EditChapter[]): void => void (state.chapters.value = next);

export const updateChapter = (state: EditorState, index: number, change: Partial<EditChapter>): void =>
  setChapters(state, state.chapters.value.map((c, j) => (j === index ? { ...c, ...change } : c)));

const key = (n: number): string => String(n + 1).padStart(2, '0');

/** The chapters as the card stores them: keys and overlay labels numbered in the order shown. */
function toStored(chapters: EditChapter[]): Chapter[] {
  return chapters.map((c, i) => ({
    ...c.stored,
    key: key(i),
    title: c.title,
    overlayLabel: String(i + 1),
    display: { ...(c.stored.display ?? {}), icon16x16: c.icon },
    tracks: c.tracks.map((tr, j) => ({ ...tr.stored, key: key(j), title: tr.title, overlayLabel: String(j + 1) })),
  }));
}

/** The card to send: what was read, with the editor's fields and chapters. */
export function cardToSave(state: EditorState, untitled: string): CardDraft {
  const base = state.card.value ?? { title: '' };
  const stored = toStored(state.chapters.value);
  const tracks = stored.flatMap((c) => c.tracks);
  const sum = (f: 'duration' | 'fileSize'): number => tracks.reduce((n, tr) => n + (tr[f] ?? 0), 0);
  return {
    ...base,
    title: state.title.value.trim() || untitled,
    content: { ...base.content, chapters: stored },
    metadata: {
      ...base.metadata,
      description: state.description.value,
      category: state.category.value as NonNullable<Card['metadata']>['category'],
      languages: state.languages.value.split(',').map((l) => l.trim()).filter(Boolean),
      cover: (state.cover.value ? { imageL: state.cover.value } : {}) as never,
      media: { ...base.metadata?.media, duration: sum('duration'), fileSize: sum('fileSize') },
    },
  };
}

/** A track made from an uploaded file once its transcode is done. */
export function trackFor(state: EditorState, file: File, done: Transcoded): EditTrack {
  const title = titleFromFileName(file.name);
  return {
    uid: state.nextUid(),
    title,
    stored: { key: '01', title, trackUrl: `yoto:#${done.sha256}`, type: 'audio', format: 'aac', duration: done.duration, fileSize: done.fileSize },
  };
}
