import { useEffect, useRef } from 'preact/hooks';

/**
 * A question before something that cannot be undone, as a modal <dialog> (the app's dialog style,
 * as the editor's conflict dialog): the browser traps focus in it, Escape cancels, and focus goes
 * back to what opened it when it closes. The safe answer has the focus first.
 */
export function ConfirmDialog(props: { open: boolean; title: string; text: string; confirm: string; cancel: string; onConfirm: () => void; onCancel: () => void }) {
  const { open, title, text, confirm, cancel, onConfirm, onCancel } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  const keep = useRef<HTMLButtonElement>(null);
  /** Whether Escape already answered this opening (see `dismissed`). */
  const answered = useRef(false);
  useEffect(() => {
    const el = dialog.current;
    if (!el) return;
    if (open && !el.open) {
      el.showModal();
      answered.current = false;
      keep.current?.focus();
    } else if (!open && el.open) el.close();
  }, [open]);
  // Escape is answered on `cancel`, at once. The browser fires `close` a task later, when the
  // dialog may be open again for a new question (Delete pressed at once), so `close` answers only
  // an opening nothing answered yet, the dialog shut: it is how Escape comes where the browser
  // skips `cancel` (a page without user activation since the dialog opened).
  const dismissed = (): void => {
    if (!open || answered.current || dialog.current?.open) return;
    answered.current = true;
    onCancel();
  };
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" aria-describedby="confirm-text" onCancel={dismissed} onClose={dismissed}>
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
