import { useSignal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

/** How long a parent holds the control: a child's tap or a passing swipe stays well below. */
export const HOLD_MS = 1_500;

/**
 * A button that acts only when held: a pointer (mouse, finger, pen) pressed on it, or Enter or
 * Space held down while it has the focus, for HOLD_MS. A shorter press does nothing. Its name is
 * `label`; `hint`, its description, says how to use it. While held it shows its progress.
 */
export function HoldButton({ label, hint, onHold, children }: { label: string; hint: string; onHold: () => void; children: ComponentChildren }) {
  const holding = useSignal(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const hintId = useId();
  const start = () => {
    if (timer.current !== undefined) return;
    holding.value = true;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      holding.value = false;
      onHold();
    }, HOLD_MS);
  };
  const cancel = () => {
    clearTimeout(timer.current);
    timer.current = undefined;
    holding.value = false;
  };
  useEffect(() => cancel, []);
  const holdKey = (key: string) => key === 'Enter' || key === ' ';
  return (
    <>
      <button
        type="button"
        class="hold-button"
        aria-label={label}
        aria-describedby={hintId}
        data-holding={holding.value ? '' : undefined}
        // The progress bar's duration (player-mode.css), set through the CSSOM, which the policy allows.
        style={{ '--hold-ms': `${HOLD_MS}ms` }}
        onPointerDown={(e) => {
          if (e.button === 0) start();
        }}
        onPointerUp={cancel}
        onPointerLeave={cancel}
        onPointerCancel={cancel}
        // A long touch would open the browser's own menu (or select text) instead.
        onContextMenu={(e) => e.preventDefault()}
        onKeyDown={(e) => {
          if (!holdKey(e.key)) return;
          // No click on Enter's keydown; the key repeats while held, the hold began at the first.
          e.preventDefault();
          if (!e.repeat) start();
        }}
        onKeyUp={(e) => {
          if (holdKey(e.key)) cancel();
        }}
        onBlur={cancel}
      >
        {children}
      </button>
      <span id={hintId} class="visually-hidden">
        {hint}
      </span>
    </>
  );
}
