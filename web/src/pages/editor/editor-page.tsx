import { batch, useSignal } from '@preact/signals';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, errorMessage, type Card } from '../../api.js';
import { messages } from '../../messages.js';
import { useModalDialog } from '../../modal-dialog.js';
import { navigate } from '../../router.js';
import { ErrorText, Link, Page, Status } from '../../ui.js';
import { SendTo } from '../send-to.js';
import { Chapters } from './chapters.js';
import { Details } from './details.js';
import { LeaveDialog } from './leave-dialog.js';
import { saveFailure, type SaveFailure } from './save-failure.js';
import { cardToSave, createEditorState, edits, EditorContext, SAVE_FAILURE_ID, showCard, type EditorState } from './state.js';
import { Uploads } from './uploads.js';

const t = messages.editor;

/** The card editor: its details, uploads and chapters, saved together with If-Match. */
export function EditorPage({ cardId }: { cardId: string | undefined }) {
  const [state] = useState(() => createEditorState(!cardId));
  const error = useSignal<string | undefined>(undefined);

  const load = async (id: string): Promise<void> => {
    const { data, error: e, response } = await api.GET('/content/{cardId}', { params: { path: { cardId: id } } });
    if (data) batch(() => showCard(state, data.card, response.headers.get('etag')));
    else error.value = errorMessage(e, response);
  };

  useEffect(() => {
    if (cardId) void load(cardId);
  }, []);

  const card = state.card.value;
  if (!card) return <Page title={messages.common.loading}><ErrorText message={error.value} /></Page>;
  return (
    <EditorContext.Provider value={state}>
      <Page title={cardId ? t.editTitle(card.title) : t.newTitle}>
        <ErrorText message={error.value} />
        <SaveForm state={state} reload={() => load(card.cardId!)} />
        {card.cardId && <SendTo cardId={card.cardId} />}
        <LeaveDialog state={state} />
      </Page>
    </EditorContext.Provider>
  );
}

/**
 * The form and its Save: what the save said ("Saved.", or why not, the field refused marked) goes
 * beside Save, announced; a 412 opens the conflict dialog.
 */
function SaveForm({ state, reload }: { state: EditorState; reload: () => Promise<void> }) {
  /** Why the last save failed, said beside Save. */
  const failure = useSignal<SaveFailure | undefined>(undefined);
  const status = useSignal('');
  const conflict = useSignal(false);
  const saveButton = useRef<HTMLButtonElement>(null);
  const keepEditing = useRef<HTMLButtonElement>(null);
  // The safe answer has the focus first: Enter on an opened dialog must not throw the edits away.
  const dialog = useModalDialog(conflict.value, () => (conflict.value = false), () => keepEditing.current?.focus());

  const save = async (overwrite = false): Promise<void> => {
    failure.value = undefined;
    state.refused.value = undefined;
    status.value = '';
    const sent = cardToSave(state, t.untitled);
    // What is saved is what the page shows now: edits made while the save is under way stay unsaved.
    const saving = edits(state);
    const etag = state.etag.value;
    const headers = sent.cardId && etag && !overwrite ? { 'if-match': etag } : {};
    const { data, error: e, response } = await api.POST('/content', { body: sent as never, params: { header: headers } });
    if (response.status === 412) {
      conflict.value = true;
      return;
    }
    conflict.value = false;
    // The edits stay as they are on the page: a retry sends them again.
    if (!data) {
      failure.value = saveFailure(e, response);
      state.refused.value = failure.value.field;
      return;
    }
    const saved = (data as { card: Card }).card;
    state.baseline.value = saving;
    state.removed.value = undefined;
    if (!sent.cardId) return navigate(`/cards/${encodeURIComponent(saved.cardId)}`, true);
    // The answer's tag is the new version's: the next save is made on it.
    state.etag.value = response.headers.get('etag') ?? undefined;
    state.card.value = saved;
    status.value = messages.common.saved;
  };

  const cardId = state.card.value?.cardId;
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <Details />
        <Uploads />
        <Chapters />
        <div class="toolbar save-bar">
          <button type="submit" class="primary" ref={saveButton}>
            {messages.common.save}
          </button>
          {cardId && <Link to={`/play/${encodeURIComponent(cardId)}`}>{t.play}</Link>}
          <Status>{status.value}</Status>
        </div>
        {failure.value && (
          <div class="toolbar save-bar">
            <p role="alert" class="error" id={SAVE_FAILURE_ID}>
              {t.saveFailed(failure.value.message)} {failure.value.retry ? t.keptTryAgain : ''}
            </p>
            {failure.value.retry && (
              // The button goes with the failure: the focus goes back to Save, whatever the answer.
              <button type="button" onClick={() => void save().then(() => saveButton.current?.focus())}>
                {t.retrySave}
              </button>
            )}
          </div>
        )}
      </form>

      <dialog {...dialog} aria-labelledby="conflict-title" aria-describedby="conflict-text">
        <h2 id="conflict-title">{t.conflictTitle}</h2>
        <p id="conflict-text">{t.conflictText}</p>
        <div class="toolbar">
          <button type="button" ref={keepEditing} onClick={() => (conflict.value = false)}>
            {t.keepEditing}
          </button>
          <button type="button" onClick={() => void reload().then(() => (conflict.value = false))}>
            {t.reload}
          </button>
          <button type="button" class="primary" onClick={() => void save(true)}>
            {t.overwrite}
          </button>
        </div>
      </dialog>
    </>
  );
}
