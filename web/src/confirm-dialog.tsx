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
  useEffect(() => {
    const el = dialog.current;
    if (!el) return;
    if (open && !el.open) {
      el.showModal();
      keep.current?.focus();
    } else if (!open && el.open) el.close();
  }, [open]);
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" aria-describedby="confirm-text" onClose={() => open && onCancel()}>
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
