import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A modal <dialog> driven by state: shown while `opening` is set, closed when it is not. A new
 * value (a new question) is a new opening; the dialog stays open across it. `onShown` runs when
 * the dialog opens (to move the focus). Spread the returned props on the <dialog>.
 *
 * Escape dismisses an opening once. It is answered on `cancel`, at once: the browser fires
 * `close` a task later, when the dialog may be open again for a new question (a Back or a
 * button pressed at once), and a late `close` must not answer that one. `close` still dismisses
 * an opening nothing answered while the dialog is shut: that is how Escape comes where the
 * browser skips `cancel` (a page without user activation since the dialog opened).
 */
export function useModalDialog(
  opening: unknown,
  onDismiss: () => void,
  onShown?: () => void,
): { ref: RefObject<HTMLDialogElement | null>; onCancel: () => void; onClose: () => void } {
  const ref = useRef<HTMLDialogElement>(null);
  /** The opening shown and not yet answered. */
  const pending = useRef<unknown>(undefined);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    if (opening) {
      pending.current = opening;
      if (!el.open) {
        el.showModal();
        onShown?.();
      }
    } else {
      pending.current = undefined;
      if (el.open) el.close();
    }
  }, [opening]);

  const dismiss = (): void => {
    if (!opening || pending.current !== opening) return;
    pending.current = undefined;
    onDismiss();
  };
  return {
    ref,
    onCancel: dismiss,
    onClose: () => {
      if (!ref.current?.open) dismiss();
    },
  };
}
