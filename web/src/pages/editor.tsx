import { batch, useSignal } from '@preact/signals';
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { api, authorizedRequest, coverOf, errorMessage, mayRetry, type Card, type CardDraft, type Chapter, type Track } from '../api.js';
import { formatDuration, formatSize, naturalOrder } from '../format.js';
import { messages } from '../messages.js';
import { navigate } from '../router.js';
import { ErrorText, Link, Page, Status } from '../ui.js';
import { SendTo } from './send-to.js';
import { IconPicker } from '../icons/icon-picker.js';
import { newUpload, start, type Transcoded, type Upload } from '../uploads.js';
import { numberedTitles } from '../numbering.js';
import { moveBy, moveSelected, moveTo, moveTrack, trackStep, type Listed, type TrackAt } from '../reorder.js';

const t = messages.editor;
const CATEGORIES = ['', 'stories', 'music', 'radio', 'podcast', 'sfx', 'activities', 'alarms'] as const;

interface EditTrack extends Listed {
  title: string;
  /** The stored track, so fields the editor does not show survive a save. */
  stored: Track;
}
interface EditChapter extends Listed {
  title: string;
  icon: string | null;
  tracks: EditTrack[];
  stored: Partial<Chapter>;
}

let uid = 0;
const nextUid = (): string => `u${++uid}`;

const toEdit = (card: CardDraft): EditChapter[] =>
  (card.content?.chapters ?? []).map((c) => ({
    uid: nextUid(),
    title: c.title ?? '',
    icon: c.display?.icon16x16 ?? null,
    stored: c,
    tracks: c.tracks.map((tr) => ({ uid: nextUid(), title: tr.title ?? '', stored: tr })),
  }));

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

const trackFor = (file: File, done: Transcoded): EditTrack => {
  const title = file.name.replace(/\.[^.]+$/, '');
  return {
    uid: nextUid(),
    title,
    stored: { key: '01', title, trackUrl: `yoto:#${done.sha256}`, type: 'audio', format: 'aac', duration: done.duration, fileSize: done.fileSize },
  };
};

/** What a drag carries when a chapter or a track is dragged (not files). */
const CHAPTER_DRAG = 'text/x-cardshelf-chapter';
const TRACK_DRAG = 'text/x-cardshelf-track';

/**
 * Every file of a drop, folders walked (webkitGetAsEntry), audio or not: the server says what is not
 * audio. An item with no entry (a drop some other page or program made) gives its file as it is.
 */
async function droppedFiles(items: DataTransferItemList): Promise<File[]> {
  const files: File[] = [];
  const entries: FileSystemEntry[] = [];
  for (const item of [...items].filter((i) => i.kind === 'file')) {
    const entry = item.webkitGetAsEntry();
    const file = entry ? undefined : item.getAsFile();
    if (entry) entries.push(entry);
    else if (file) files.push(file);
  }
  const walk = async (entry: FileSystemEntry): Promise<void> => {
    if (entry.isFile) files.push(await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject)));
    else if (entry.isDirectory) {
      const reader = (entry as FileSystemDirectoryEntry).createReader();
      for (;;) {
        const batchOf = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
        if (batchOf.length === 0) break;
        for (const child of batchOf) await walk(child);
      }
    }
  };
  for (const entry of entries) await walk(entry);
  return files;
}

export function EditorPage({ cardId }: { cardId: string | undefined }) {
  const card = useSignal<CardDraft | undefined>(cardId ? undefined : { title: '' });
  const etag = useSignal<string | undefined>(undefined);
  const title = useSignal('');
  const description = useSignal('');
  const category = useSignal('');
  const languages = useSignal('');
  const cover = useSignal<string | undefined>(undefined);
  const chapters = useSignal<EditChapter[]>([]);
  const selected = useSignal<Set<string>>(new Set());
  const renamePattern = useSignal<string>(t.renamePatternDefault);
  const renameStart = useSignal('1');
  const layout = useSignal<'perFile' | 'oneChapter'>('perFile');
  const uploads = useSignal<Upload[]>([]);
  /** The chapter each upload's batch fills (one chapter of many tracks), by upload id. */
  const targets = useRef(new Map<number, string | undefined>()).current;
  const error = useSignal<string | undefined>(undefined);
  /** Why the last save failed, said beside Save; `retry` when trying again may succeed. */
  const saveFailure = useSignal<{ message: string; retry: boolean } | undefined>(undefined);
  const status = useSignal('');
  const conflict = useSignal(false);
  const dialog = useRef<HTMLDialogElement>(null);
  const saveButton = useRef<HTMLButtonElement>(null);

  const show = (read: Card, tag: string | null) => {
    batch(() => {
      card.value = read;
      etag.value = tag ?? undefined;
      title.value = read.title;
      description.value = read.metadata?.description ?? '';
      category.value = read.metadata?.category ?? '';
      languages.value = (read.metadata?.languages ?? []).join(', ');
      cover.value = coverOf(read);
      chapters.value = toEdit(read);
      selected.value = new Set();
    });
  };
  const load = async (id: string) => {
    const { data, error: e, response } = await api.GET('/content/{cardId}', { params: { path: { cardId: id } } });
    if (data) show(data.card, response.headers.get('etag'));
    else error.value = errorMessage(e, response);
  };

  useEffect(() => {
    if (cardId) void load(cardId);
  }, []);
  useEffect(() => {
    if (conflict.value) dialog.current?.showModal();
    else dialog.current?.close();
  }, [conflict.value]);

  const setChapters = (next: EditChapter[]) => (chapters.value = next);
  const updateChapter = (i: number, change: Partial<EditChapter>) => setChapters(chapters.value.map((c, j) => (j === i ? { ...c, ...change } : c)));

  /** New files: sorted naturally by name, each a row that uploads; done ones become chapters or tracks. */
  const addFiles = (files: File[]) => {
    const sorted = [...files].sort((a, b) => naturalOrder(a.webkitRelativePath || a.name, b.webkitRelativePath || b.name));
    const rows = sorted.map(newUpload);
    uploads.value = [...uploads.value, ...rows];
    // One chapter of many tracks: a chapter made now, filled in the files' order as they finish.
    const target = layout.value === 'oneChapter' ? nextUid() : undefined;
    for (const row of rows) targets.set(row.id, target);
    if (target) setChapters([...chapters.value, { uid: target, title: sorted[0]?.name.replace(/\.[^.]+$/, '') ?? '', icon: null, tracks: [], stored: {} }]);
    void Promise.all(rows.map((row) => start(row))).then(() => placeDone(rows, target));
  };
  const placeDone = (rows: Upload[], target: string | undefined) => {
    const done = rows.filter((r) => r.result.value).map((r) => trackFor(r.file, r.result.value!));
    if (target) setChapters(chapters.value.map((c) => (c.uid === target ? { ...c, tracks: [...c.tracks, ...done] } : c)));
    else setChapters([...chapters.value, ...done.map((tr) => ({ uid: nextUid(), title: tr.title, icon: null, tracks: [tr], stored: {} }))]);
  };
  // A retried file joins the chapter its batch went to (if that chapter is still there).
  const retry = (row: Upload) => {
    const target = targets.get(row.id);
    void start(row).then(() => placeDone([row], chapters.value.some((c) => c.uid === target) ? target : undefined));
  };

  const uploadIcon = async (file: File) => {
    const answer = await authorizedRequest(`/media/displayIcons/user/me/upload?autoConvert=true&filename=${encodeURIComponent(file.name)}`, {
      method: 'POST',
      body: file,
      headers: { 'content-type': file.type || 'application/octet-stream' },
    });
    const body = (await answer.json()) as { displayIcon?: unknown; error?: { message: string } };
    if (!body.displayIcon) return void (error.value = body.error?.message ?? `HTTP ${answer.status}`);
    // The pickers list one's own icons afresh when opened: the new one is among them.
    status.value = t.iconAdded;
  };

  const uploadCover = async (file: File) => {
    status.value = t.coverUploading;
    const answer = await authorizedRequest('/media/coverImage/user/me/upload?coverType=myo', { method: 'POST', body: file, headers: { 'content-type': file.type || 'application/octet-stream' } });
    const body = (await answer.json()) as { coverImage?: { mediaUrl: string }; error?: { message: string } };
    if (body.coverImage) {
      cover.value = body.coverImage.mediaUrl;
      status.value = '';
    } else error.value = body.error?.message ?? `HTTP ${answer.status}`;
  };

  const body = (): CardDraft => {
    const base = card.value ?? { title: '' };
    const stored = toStored(chapters.value);
    const tracks = stored.flatMap((c) => c.tracks);
    const sum = (f: 'duration' | 'fileSize') => tracks.reduce((n, tr) => n + (tr[f] ?? 0), 0);
    return {
      ...base,
      title: title.value.trim() || t.untitled,
      content: { ...base.content, chapters: stored },
      metadata: {
        ...base.metadata,
        description: description.value,
        category: category.value as NonNullable<Card['metadata']>['category'],
        languages: languages.value.split(',').map((l) => l.trim()).filter(Boolean),
        cover: (cover.value ? { imageL: cover.value } : {}) as never,
        media: { ...base.metadata?.media, duration: sum('duration'), fileSize: sum('fileSize') },
      },
    };
  };
  const save = async (overwrite = false) => {
    saveFailure.value = undefined;
    status.value = '';
    const sent = body();
    const headers = sent.cardId && etag.value && !overwrite ? { 'if-match': etag.value } : {};
    const { data, error: e, response } = await api.POST('/content', { body: sent as never, params: { header: headers } });
    if (response.status === 412) {
      conflict.value = true;
      return;
    }
    conflict.value = false;
    // The edits stay as they are on the page: a retry sends them again.
    if (!data) return void (saveFailure.value = { message: errorMessage(e, response), retry: mayRetry(response) });
    const saved = (data as { card: Card }).card;
    if (!sent.cardId) return navigate(`/cards/${encodeURIComponent(saved.cardId)}`, true);
    // The answer's tag is the new version's: the next save is made on it.
    etag.value = response.headers.get('etag') ?? undefined;
    card.value = saved;
    status.value = messages.common.saved;
  };

  const totals = chapters.value.flatMap((c) => c.tracks).reduce((s, tr) => ({ d: s.d + (tr.stored.duration ?? 0), b: s.b + (tr.stored.fileSize ?? 0) }), { d: 0, b: 0 });
  const chosen = selected.value;
  const toggle = (id: string) => {
    const next = new Set(chosen);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    selected.value = next;
  };
  const bulk = (change: (c: EditChapter, n: number) => EditChapter | undefined) => {
    let n = 0;
    setChapters(chapters.value.flatMap((c) => (chosen.has(c.uid) ? (change(c, ++n) ?? []) : [c])));
  };
  const renameSelected = () => {
    const titles = numberedTitles(renamePattern.value, Number(renameStart.value), chosen.size);
    bulk((c, n) => ({ ...c, title: titles[n - 1]! }));
  };

  if (!card.value) return <Page title={messages.common.loading}><ErrorText message={error.value} /></Page>;
  return (
    <Page title={cardId ? t.editTitle(card.value.title) : t.newTitle}>
      <ErrorText message={error.value} />
      <Status>{status.value}</Status>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <fieldset>
          <legend>{t.fields}</legend>
          <label for="title">{t.cardTitle}</label>
          <input id="title" value={title.value} onInput={(e) => (title.value = e.currentTarget.value)} required />
          <label for="description">{t.description}</label>
          <textarea id="description" value={description.value} onInput={(e) => (description.value = e.currentTarget.value)} />
          <label for="category">{t.category}</label>
          <select id="category" value={category.value} onChange={(e) => (category.value = e.currentTarget.value)}>
            {CATEGORIES.map((c) => (
              <option key={c} value={c}>
                {c || '—'}
              </option>
            ))}
          </select>
          <label for="languages">{t.languages}</label>
          <input id="languages" value={languages.value} onInput={(e) => (languages.value = e.currentTarget.value)} />
          <label for="cover">{t.cover}</label>
          <input id="cover" type="file" accept="image/*" onChange={(e) => e.currentTarget.files?.[0] && void uploadCover(e.currentTarget.files[0])} />
          {cover.value ? <img class="cover" src={cover.value} alt={t.cover} width={130} height={100} /> : <p>{t.noCover}</p>}
        </fieldset>

        {/* Dropping files is a mouse shortcut; the file chooser below does the same by keyboard. */}
        {/* eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions */}
        <fieldset
          class="drop"
          onDragOver={(e) => e.preventDefault()}
          onDrop={(e) => {
            if (!e.dataTransfer?.items.length || e.dataTransfer.types.includes(CHAPTER_DRAG) || e.dataTransfer.types.includes(TRACK_DRAG)) return;
            e.preventDefault();
            void droppedFiles(e.dataTransfer.items).then(addFiles);
          }}
        >
          <legend>{t.files}</legend>
          <div role="radiogroup" aria-label={t.layout} class="choice">
            <span aria-hidden="true">{t.layout}: </span>
            {(['perFile', 'oneChapter'] as const).map((value) => (
              <label key={value}>
                <input type="radio" name="layout" value={value} checked={layout.value === value} onChange={() => (layout.value = value)} /> {t[value]}
              </label>
            ))}
          </div>
          <p>{t.dropHint}</p>
          {/* The input is hidden behind its label, styled as a button; its focus shows on the label. */}
          <input
            id="files"
            class="visually-hidden"
            type="file"
            multiple
            accept="audio/*,video/mp4,video/webm,.m4a,.m4b,.flac,.opus"
            onChange={(e) => {
              addFiles([...(e.currentTarget.files ?? [])]);
              e.currentTarget.value = '';
            }}
          />
          <label for="files" class="button">
            {t.choose}
          </label>
          {uploads.value.length > 0 && (
            <ul class="uploads" aria-label={t.uploads}>
              {uploads.value.map((row) => (
                <UploadRow key={row.id} row={row} onRetry={() => retry(row)} />
              ))}
            </ul>
          )}
        </fieldset>

        <fieldset>
          <legend>{t.chapters}</legend>
          <p class="hint">{t.reorderHint}</p>
          <div class="toolbar">
            <label for="icon-upload">{t.uploadIcon}</label>
            <input id="icon-upload" type="file" accept="image/*" onChange={(e) => e.currentTarget.files?.[0] && void uploadIcon(e.currentTarget.files[0])} />
          </div>
          <p>{t.totals(formatDuration(totals.d), formatSize(totals.b))}</p>
          {chosen.size > 0 && (
            <div class="toolbar" role="group" aria-label={t.selected(chosen.size)}>
              <button type="button" onClick={() => bulk(() => undefined)}>
                {messages.common.delete} ({chosen.size})
              </button>
              <span class="rename">
                <label for="rename-pattern">{t.renamePattern}</label>
                <input
                  id="rename-pattern"
                  value={renamePattern.value}
                  onInput={(e) => (renamePattern.value = e.currentTarget.value)}
                  onKeyDown={(e) => {
                    // Enter renames here; it would otherwise save the card.
                    if (e.key !== 'Enter') return;
                    e.preventDefault();
                    renameSelected();
                  }}
                />
                <label for="rename-start">{t.renameStart}</label>
                <input id="rename-start" type="number" min={0} step={1} size={4} value={renameStart.value} onInput={(e) => (renameStart.value = e.currentTarget.value)} />
                <button type="button" onClick={renameSelected}>
                  {t.renameSelected(chosen.size)}
                </button>
              </span>
              <button type="button" onClick={() => setChapters(moveSelected(chapters.value, (c) => chosen.has(c.uid), -1))}>
                {t.moveSelectedUp}
              </button>
              <button type="button" onClick={() => setChapters(moveSelected(chapters.value, (c) => chosen.has(c.uid), 1))}>
                {t.moveSelectedDown}
              </button>
              <IconPicker label={t.icon(t.selected(chosen.size))} value={undefined} onChange={(icon) => bulk((c) => ({ ...c, icon: icon ?? null }))} />
            </div>
          )}
          {chapters.value.length === 0 && <p>{t.noChapters}</p>}
          <ol class="chapters">
            {chapters.value.map((chapter, i) => (
              <ChapterRow
                key={chapter.uid}
                chapter={chapter}
                index={i}
                count={chapters.value.length}
                selected={chosen.has(chapter.uid)}
                onSelect={() => toggle(chapter.uid)}
                onChange={(change) => updateChapter(i, change)}
                onMove={(by) => setChapters(moveBy(chapters.value, i, by))}
                onMoveTrack={(from, to) => setChapters(moveTrack(chapters.value, from, to))}
                trackStep={(track, by) => trackStep(chapters.value, { chapter: i, track }, by)}
                onDropOn={(from) => setChapters(moveTo(chapters.value, from, i))}
                onRemove={() => setChapters(chapters.value.filter((_, j) => j !== i))}
                onSplit={() =>
                  setChapters(chapters.value.flatMap((c, j) => (j === i ? c.tracks.map((tr) => ({ uid: nextUid(), title: tr.title, icon: c.icon, tracks: [tr], stored: {} })) : [c])))
                }
                onMerge={() => {
                  const next = chapters.value[i + 1];
                  if (next) setChapters([...chapters.value.slice(0, i), { ...chapter, tracks: [...chapter.tracks, ...next.tracks] }, ...chapters.value.slice(i + 2)]);
                }}
              />
            ))}
          </ol>
        </fieldset>
        <div class="toolbar">
          <button type="submit" class="primary" ref={saveButton}>
            {messages.common.save}
          </button>
          {card.value.cardId && <Link to={`/play/${encodeURIComponent(card.value.cardId)}`}>{t.play}</Link>}
        </div>
        {saveFailure.value && (
          <div class="toolbar">
            <p role="alert" class="error">
              {t.saveFailed(saveFailure.value.message)} {saveFailure.value.retry ? t.keptTryAgain : ''}
            </p>
            {saveFailure.value.retry && (
              // The button goes with the failure: the focus goes back to Save, whatever the answer.
              <button type="button" onClick={() => void save().then(() => saveButton.current?.focus())}>
                {t.retrySave}
              </button>
            )}
          </div>
        )}
      </form>
      {card.value.cardId && <SendTo cardId={card.value.cardId} />}

      <dialog ref={dialog} aria-labelledby="conflict-title" onClose={() => (conflict.value = false)}>
        <h2 id="conflict-title">{t.conflictTitle}</h2>
        <p>{t.conflictText}</p>
        <div class="toolbar">
          <button type="button" onClick={() => void load(card.value!.cardId!).then(() => (conflict.value = false))}>
            {t.reload}
          </button>
          <button type="button" class="primary" onClick={() => void save(true)}>
            {t.overwrite}
          </button>
        </div>
      </dialog>
    </Page>
  );
}

/**
 * After a keyboard move, the moved row's handle keeps the focus (the row is rendered in its new place).
 * A layout effect, run as the move is rendered: a plain effect waits for the next frame, and a key
 * pressed before it (a quick second Alt+Arrow) went to the page, the moved row having lost the focus.
 */
const moved: { uid: string | undefined } = { uid: undefined };

function UploadRow({ row, onRetry }: { row: Upload; onRetry: () => void }) {
  const phase = row.phase.value;
  const label = `${t.uploadRow(row.file.name)}: ${t.phases[phase]}`;
  return (
    <li class={`upload ${phase}`}>
      <span class="name">{row.file.name}</span>
      <progress max={100} value={phase === 'done' ? 100 : row.percent.value} aria-label={label} />
      <span class="phase">
        {t.phases[phase]} {phase === 'uploading' || phase === 'transcoding' ? `${Math.round(row.percent.value)}%` : ''}
      </span>
      {row.error.value && (
        <>
          <span class="error" role="alert">
            {row.error.value}
          </span>
          <button type="button" onClick={onRetry}>
            {t.retry(row.file.name)}
          </button>
        </>
      )}
    </li>
  );
}

interface RowProps {
  chapter: EditChapter;
  index: number;
  count: number;
  selected: boolean;
  onSelect: () => void;
  onChange: (change: Partial<EditChapter>) => void;
  onMove: (by: number) => void;
  /** A track moved, in this chapter or between chapters. */
  onMoveTrack: (from: TrackAt, to: TrackAt) => void;
  /** Where this chapter's track `track` goes one place up or down (across chapters at the edges). */
  trackStep: (track: number, by: -1 | 1) => TrackAt | undefined;
  onDropOn: (from: number) => void;
  onRemove: () => void;
  onSplit: () => void;
  onMerge: () => void;
}

function ChapterRow({ chapter, index, count, selected, onSelect, onChange, onMove, onMoveTrack, trackStep: stepOf, onDropOn, onRemove, onSplit, onMerge }: RowProps) {
  const n = index + 1;
  const name = chapter.title || `${n}`;
  const handle = useRef<HTMLButtonElement>(null);
  useLayoutEffect(() => {
    if (moved.uid === chapter.uid) {
      handle.current?.focus();
      moved.uid = undefined;
    }
  });
  const move = (by: number) => {
    moved.uid = chapter.uid;
    onMove(by);
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
        if (track) onMoveTrack(track, { chapter: index, track: chapter.tracks.length });
        else onDropOn(Number(from));
      }}
    >
      <div class="row">
        <input id={`select-${chapter.uid}`} type="checkbox" checked={selected} onChange={onSelect} aria-label={t.select(name)} />
        <span class="number" aria-hidden="true">
          {n}
        </span>
        <label for={`title-${chapter.uid}`} class="visually-hidden">
          {t.chapterTitle(n)}
        </label>
        <input
          id={`title-${chapter.uid}`}
          value={chapter.title}
          onInput={(e) => onChange({ title: e.currentTarget.value })}
          onKeyDown={(e) => {
            if (e.altKey && (e.key === 'ArrowUp' || e.key === 'ArrowDown')) {
              e.preventDefault();
              move(e.key === 'ArrowUp' ? -1 : 1);
            }
          }}
        />
        <span class="meta">{formatDuration(duration)}</span>
        <IconPicker label={t.icon(name)} value={chapter.icon ?? undefined} onChange={(icon) => onChange({ icon: icon ?? null })} suggestFor={chapter.title} />
        <span class="actions">
          <button type="button" ref={handle} disabled={index === 0} onClick={() => move(-1)} aria-label={messages.common.moveUp(name)}
            onKeyDown={(e) => {
              if (e.altKey && (e.key === 'ArrowUp' || e.key === 'ArrowDown')) {
                e.preventDefault();
                move(e.key === 'ArrowUp' ? -1 : 1);
              }
            }}
          >
            ↑
          </button>
          <button type="button" disabled={index === count - 1} onClick={() => move(1)} aria-label={messages.common.moveDown(name)}>
            ↓
          </button>
          {chapter.tracks.length > 1 && (
            <button type="button" onClick={onSplit} aria-label={t.split(name)}>
              {t.splitShort}
            </button>
          )}
          {index < count - 1 && (
            <button type="button" onClick={onMerge} aria-label={t.mergeNext(name)}>
              {t.mergeShort}
            </button>
          )}
          <button type="button" onClick={onRemove} aria-label={messages.common.remove(name)}>
            ✕
          </button>
        </span>
      </div>
      {chapter.tracks.length > 1 && (
        <ol class="tracks">
          {chapter.tracks.map((track, j) => (
            // As chapters: dragged by the mouse, moved by the buttons and Alt+Arrow keys.
            // eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions
            <li
              key={track.uid}
              draggable
              data-testid={`track-${n}-${j + 1}`}
              onDragStart={(e) => {
                // Not the chapter's drag too (the row is inside the chapter's).
                e.stopPropagation();
                e.dataTransfer?.setData(TRACK_DRAG, `${index}:${j}`);
              }}
              onDragOver={(e) => e.preventDefault()}
              onDrop={(e) => {
                const from = trackFrom(e.dataTransfer?.getData(TRACK_DRAG));
                if (!from) return;
                e.preventDefault();
                e.stopPropagation();
                onMoveTrack(from, { chapter: index, track: j });
              }}
            >
              <span class="number" aria-hidden="true">
                {j + 1}
              </span>
              <label for={`track-${track.uid}`} class="visually-hidden">
                {t.trackTitle(j + 1, n)}
              </label>
              <TrackTitle
                id={`track-${track.uid}`}
                uid={track.uid}
                value={track.title}
                onInput={(title) => onChange({ tracks: chapter.tracks.map((tr, k) => (k === j ? { ...tr, title } : tr)) })}
                onMove={(by) => {
                  const to = stepOf(j, by);
                  if (!to) return;
                  moved.uid = track.uid;
                  onMoveTrack({ chapter: index, track: j }, to);
                }}
              />
              <span class="meta">{formatDuration(track.stored.duration ?? 0)}</span>
              <IconPicker
                label={t.icon(track.title || t.trackTitle(j + 1, n))}
                value={track.stored.display?.icon16x16 ?? undefined}
                onChange={(icon) => onChange({ tracks: chapter.tracks.map((tr, k) => (k === j ? { ...tr, stored: { ...tr.stored, display: { ...tr.stored.display, icon16x16: icon ?? null } } } : tr)) })}
                suggestFor={track.title}
              />
              <button type="button" disabled={j === 0} onClick={() => onChange({ tracks: moveBy(chapter.tracks, j, -1) })} aria-label={messages.common.moveUp(track.title)}>
                ↑
              </button>
              <button type="button" disabled={j === chapter.tracks.length - 1} onClick={() => onChange({ tracks: moveBy(chapter.tracks, j, 1) })} aria-label={messages.common.moveDown(track.title)}>
                ↓
              </button>
            </li>
          ))}
        </ol>
      )}
    </li>
  );
}

/** A dragged track's place, as its drag carries it ("chapter:track"). */
function trackFrom(data: string | undefined): TrackAt | undefined {
  const [, chapter, track] = /^(\d+):(\d+)$/.exec(data ?? '') ?? [];
  return chapter === undefined || track === undefined ? undefined : { chapter: Number(chapter), track: Number(track) };
}

/** A track's title; Alt+Arrow Up/Down moves the track, which keeps the focus in its new place. */
function TrackTitle({ id, uid: trackUid, value, onInput, onMove }: { id: string; uid: string; value: string; onInput: (title: string) => void; onMove: (by: -1 | 1) => void }) {
  const input = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => {
    if (moved.uid === trackUid) {
      input.current?.focus();
      moved.uid = undefined;
    }
  });
  return (
    <input
      id={id}
      ref={input}
      value={value}
      onInput={(e) => onInput(e.currentTarget.value)}
      onKeyDown={(e) => {
        if (e.altKey && (e.key === 'ArrowUp' || e.key === 'ArrowDown')) {
          e.preventDefault();
          onMove(e.key === 'ArrowUp' ? -1 : 1);
        }
      }}
    />
  );
}
