import { useRef } from 'preact/hooks';
import { useModalDialog } from './modal-dialog.js';

/**
 * A question before something that cannot be undone, as a modal <dialog> (the app's dialog style,
 * as the editor's conflict dialog): the browser traps focus in it, Escape cancels, and focus goes
 * back to what opened it when it closes. The safe answer has the focus first.
 */
export function ConfirmDialog(props: { open: boolean; title: string; text: string; confirm: string; cancel: string; onConfirm: () => void; onCancel: () => void }) {
  const { open, title, text, confirm, cancel, onConfirm, onCancel } = props;
  const keep = useRef<HTMLButtonElement>(null);
  const dialog = useModalDialog(open, onCancel, () => keep.current?.focus());
  return (
    <dialog {...dialog} aria-labelledby="confirm-title" aria-describedby="confirm-text">
      <h2 id="confirm-title">{title}</h2>
      <p id="confirm-text">{text}</p>
      <div class="toolbar">
        <button type="button" ref={keep} onClick={onCancel}>
          {cancel}
        </button>
        <button type="button" class="danger" onClick={onConfirm}>
          {confirm}
        </button>
      </div>
    </dialog>
  );
}
