import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { authorizedRequest } from '../../api.js';
import { formatDuration, formatSize } from '../../format.js';
import { messages } from '../../messages.js';
import { numberedTitles } from '../../numbering.js';
import { moveSelected } from '../../reorder.js';
import { ErrorText, Status } from '../../ui.js';
import { ChapterRow } from './chapter-row.js';
import { IconPicker } from '../../icons/icon-picker.js';
import { removeChapters } from './removal.js';
import './editor.css';
import { setChapters, useEditor, type EditChapter, type EditorState } from './state.js';

const t = messages.editor;

/** The chapters: an icon of one's own uploaded, the totals, the bulk toolbar and the list. */
export function Chapters() {
  const { chapters, selected } = useEditor();
  const totals = chapters.value.flatMap((c) => c.tracks).reduce((s, tr) => ({ d: s.d + (tr.stored.duration ?? 0), b: s.b + (tr.stored.fileSize ?? 0) }), { d: 0, b: 0 });
  return (
    <fieldset>
      <legend>{t.chapters}</legend>
      <p class="hint">{t.reorderHint}</p>
      <IconUpload />
      <p>{t.totals(formatDuration(totals.d), formatSize(totals.b))}</p>
      {selected.value.size > 0 && <BulkToolbar />}
      {chapters.value.length === 0 && <p>{t.noChapters}</p>}
      <ol class="chapters">
        {chapters.value.map((chapter, i) => (
          <ChapterRow key={chapter.uid} chapter={chapter} index={i} />
        ))}
      </ol>
      <UndoBar />
    </fieldset>
  );
}

/** A new icon of one's own (any image, made 16×16), titled by its file's name; the pickers list one's own icons afresh when opened. */
function IconUpload() {
  const status = useSignal('');
  const error = useSignal<string | undefined>(undefined);
  const upload = async (file: File): Promise<void> => {
    error.value = undefined;
    status.value = '';
    const answer = await authorizedRequest(`/media/displayIcons/user/me/upload?autoConvert=true&filename=${encodeURIComponent(file.name)}`, {
      method: 'POST',
      body: file,
      headers: { 'content-type': file.type || 'application/octet-stream' },
    });
    const body = (await answer.json()) as { displayIcon?: unknown; error?: { message: string } };
    if (!body.displayIcon) return void (error.value = body.error?.message ?? `HTTP ${answer.status}`);
    status.value = t.iconAdded;
  };
  return (
    <div class="toolbar">
      <label for="icon-upload">{t.uploadIcon}</label>
      <input id="icon-upload" type="file" accept="image/*" onChange={(e) => e.currentTarget.files?.[0] && void upload(e.currentTarget.files[0])} />
      <Status>{status.value}</Status>
      <ErrorText message={error.value} />
    </div>
  );
}

/** Each selected chapter changed by `change`; `n` counts them from 1 in the list's order. */
function bulk(state: EditorState, change: (c: EditChapter, n: number) => EditChapter): void {
  let n = 0;
  const chosen = state.selected.value;
  setChapters(state, state.chapters.value.map((c) => (chosen.has(c.uid) ? change(c, ++n) : c)));
}

/** What the selected chapters may have done at once: delete, rename by a pattern, move, an icon. */
function BulkToolbar() {
  const state = useEditor();
  const chosen = state.selected.value;
  const pattern = useSignal<string>(t.renamePatternDefault);
  const from = useSignal('1');
  const rename = (): void => {
    const titles = numberedTitles(pattern.value, Number(from.value), chosen.size);
    bulk(state, (c, n) => ({ ...c, title: titles[n - 1]! }));
  };
  const move = (by: -1 | 1): void => setChapters(state, moveSelected(state.chapters.value, (c) => chosen.has(c.uid), by));
  return (
    <div class="toolbar" role="group" aria-label={t.selected(chosen.size)}>
      <button type="button" onClick={() => removeChapters(state, state.chapters.value.flatMap((c, i) => (chosen.has(c.uid) ? [i] : [])))}>
        {messages.common.delete} ({chosen.size})
      </button>
      <span class="rename">
        <label for="rename-pattern">{t.renamePattern}</label>
        <input
          id="rename-pattern"
          value={pattern.value}
          onInput={(e) => (pattern.value = e.currentTarget.value)}
          onKeyDown={(e) => {
            // Enter renames here; it would otherwise save the card.
            if (e.key !== 'Enter') return;
            e.preventDefault();
            rename();
          }}
        />
        <label for="rename-start">{t.renameStart}</label>
        <input id="rename-start" type="number" min={0} step={1} size={4} value={from.value} onInput={(e) => (from.value = e.currentTarget.value)} />
        <button type="button" onClick={rename}>
          {t.renameSelected(chosen.size)}
        </button>
      </span>
      <button type="button" onClick={() => move(-1)}>
        {t.moveSelectedUp}
      </button>
      <button type="button" onClick={() => move(1)}>
        {t.moveSelectedDown}
      </button>
      <IconPicker label={t.icon(t.selected(chosen.size))} value={undefined} onChange={(icon) => bulk(state, (c) => ({ ...c, icon: icon ?? null }))} />
    </div>
  );
}

/**
 * The last deletion, announced ("Track “Intro” deleted.") with its Undo, which takes the focus
 * (the deleted row's button went with it). Below the list, kept in view while the list is.
 */
function UndoBar() {
  const { removed } = useEditor();
  const undoButton = useRef<HTMLButtonElement>(null);
  const restored = useSignal(false);
  const removal = removed.value;
  useEffect(() => {
    if (!removal) return;
    restored.value = false;
    undoButton.current?.focus();
  }, [removal]);
  return (
    <div class={removal || restored.value ? 'undo-bar shown' : 'undo-bar'}>
      <p role="status">{removal?.message ?? (restored.value ? messages.cardEditor.restored : '')}</p>
      {removal && (
        <button
          type="button"
          ref={undoButton}
          onClick={() => {
            removed.value = undefined;
            restored.value = true;
            removal.undo();
          }}
        >
          {messages.cardEditor.undo}
        </button>
      )}
    </div>
  );
}
