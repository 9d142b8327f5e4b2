import { titleFromFileName } from '../../file-titles.js';
import { naturalOrder } from '../../format.js';
import { messages } from '../../messages.js';
import { newUpload, start, type Upload } from '../../uploads.js';
import { CHAPTER_DRAG, TRACK_DRAG } from './drag.js';
import { setChapters, trackFor, useEditor, type EditorState } from './state.js';

const t = messages.editor;

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

/** Done uploads become chapters (one each), or tracks of the batch's chapter. */
function placeDone(state: EditorState, rows: Upload[], target: string | undefined): void {
  const done = rows.filter((r) => r.result.value).map((r) => trackFor(state, r.file, r.result.value!));
  const chapters = state.chapters.value;
  if (target) setChapters(state, chapters.map((c) => (c.uid === target ? { ...c, tracks: [...c.tracks, ...done] } : c)));
  else setChapters(state, [...chapters, ...done.map((tr) => ({ uid: state.nextUid(), title: tr.title, icon: null, tracks: [tr], stored: {} }))]);
}

/** New files: sorted naturally by name, each a row that uploads; done ones become chapters or tracks. */
function addFiles(state: EditorState, files: File[]): void {
  const sorted = [...files].sort((a, b) => naturalOrder(a.webkitRelativePath || a.name, b.webkitRelativePath || b.name));
  const rows = sorted.map(newUpload);
  state.uploads.value = [...state.uploads.value, ...rows];
  // One chapter of many tracks: a chapter made now, filled in the files' order as they finish.
  const target = state.layout.value === 'oneChapter' ? state.nextUid() : undefined;
  for (const row of rows) state.targets.set(row.id, target);
  if (target) setChapters(state, [...state.chapters.value, { uid: target, title: sorted[0] ? titleFromFileName(sorted[0].name) : '', icon: null, tracks: [], stored: {} }]);
  void Promise.all(rows.map((row) => start(row))).then(() => placeDone(state, rows, target));
}

/** A retried file joins the chapter its batch went to (if that chapter is still there). */
function retry(state: EditorState, row: Upload): void {
  const target = state.targets.get(row.id);
  void start(row).then(() => placeDone(state, [row], state.chapters.value.some((c) => c.uid === target) ? target : undefined));
}

/** Audio files chosen or dropped (folders too), each uploading on its row. */
export function Uploads() {
  const state = useEditor();
  const { layout, uploads } = state;
  return (
    // Dropping files is a mouse shortcut; the file chooser below does the same by keyboard.
    // eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions
    <fieldset
      class="drop"
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        if (!e.dataTransfer?.items.length || e.dataTransfer.types.includes(CHAPTER_DRAG) || e.dataTransfer.types.includes(TRACK_DRAG)) return;
        e.preventDefault();
        void droppedFiles(e.dataTransfer.items).then((files) => addFiles(state, files));
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
          addFiles(state, [...(e.currentTarget.files ?? [])]);
          e.currentTarget.value = '';
        }}
      />
      <label for="files" class="button">
        {t.choose}
      </label>
      {uploads.value.length > 0 && (
        <ul class="uploads" aria-label={t.uploads}>
          {uploads.value.map((row) => (
            <UploadRow key={row.id} row={row} onRetry={() => retry(state, row)} />
          ))}
        </ul>
      )}
    </fieldset>
  );
}

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
