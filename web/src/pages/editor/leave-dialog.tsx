import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useModalDialog } from '../../modal-dialog.js';
import { messages } from '../../messages.js';
import { guardLeaving } from '../../router.js';
import type { EditorState } from './state.js';

const t = messages.cardEditor;

/**
 * While the editor has unsaved edits, leaving asks first: an in-app move (a link, back and forward)
 * opens this dialog (Stay is the default and Escape's answer); closing the tab or reloading gets the
 * browser's own question (`beforeunload`).
 */
export function LeaveDialog({ state }: { state: EditorState }) {
  /** The pending question's answer: true leaves. */
  const answer = useSignal<((leave: boolean) => void) | undefined>(undefined);

  useEffect(
    () =>
      guardLeaving(() => {
        if (!state.unsaved.value) return true;
        answer.value?.(false);
        return new Promise<boolean>((resolve) => (answer.value = resolve));
      }),
    [],
  );
  // The browser's question reads the edits' state when it is asked, not when a render last ran:
  // the listener an effect removed after "Saved." showed could still ask for a moment.
  useEffect(() => {
    const ask = (e: BeforeUnloadEvent): void => {
      if (state.unsaved.value) e.preventDefault();
    };
    addEventListener('beforeunload', ask);
    return () => removeEventListener('beforeunload', ask);
  }, []);
  const reply = (leave: boolean): void => {
    const resolve = answer.value;
    answer.value = undefined;
    resolve?.(leave);
  };
  const dialog = useModalDialog(answer.value, () => reply(false));
  return (
    <dialog {...dialog} aria-labelledby="leave-title" aria-describedby="leave-text">
      <h2 id="leave-title">{t.leaveTitle}</h2>
      <p id="leave-text">{t.leaveText}</p>
      <div class="toolbar">
        {/* First, so the dialog opens with the focus on staying. */}
        <button type="button" class="primary" onClick={() => reply(false)}>
          {t.stay}
        </button>
        <button type="button" onClick={() => reply(true)}>
          {t.leave}
        </button>
      </div>
    </dialog>
  );
}
