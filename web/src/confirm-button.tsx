import { useSignal } from '@preact/signals';
import { useLayoutEffect, useRef } from 'preact/hooks';
import { messages } from './messages.js';

/**
 * A button whose action is asked about first, in place: the question with "Yes" (styled as the
 * danger it is) and Cancel; the focus moves to the question, and back to the button on Cancel.
 * The focus moves in a layout effect, in the same task as the render: an effect runs after the
 * paint, and a quick Tab pressed before it would be overtaken (the focus yanked back to the box).
 */
export function ConfirmButton({ label, question, yes, onConfirm }: { label: string; question: string; yes: string; onConfirm: () => Promise<unknown> }) {
  const asking = useSignal(false);
  const box = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const id = useRef(`confirm-${Math.random().toString(36).slice(2)}`).current;
  useLayoutEffect(() => {
    if (asking.value) box.current?.focus();
  }, [asking.value]);
  if (!asking.value) {
    return (
      <button type="button" ref={button} onClick={() => (asking.value = true)}>
        {label}
      </button>
    );
  }
  return (
    <div class="confirm" ref={box} tabIndex={-1} role="group" aria-labelledby={id}>
      <p id={id}>{question}</p>
      <div class="toolbar">
        <button type="button" class="danger" onClick={() => void onConfirm().finally(() => (asking.value = false))}>
          {yes}
        </button>
        <button
          type="button"
          onClick={() => {
            asking.value = false;
            queueMicrotask(() => button.current?.focus());
          }}
        >
          {messages.common.cancel}
        </button>
      </div>
    </div>
  );
}
