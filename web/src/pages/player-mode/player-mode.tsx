import { useSignal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { signOut, tokens } from '../../auth.js';
import { MainNav } from '../../main-nav.js';
import { messages } from '../../messages.js';
import { HoldButton } from './hold-button.js';
import './player-mode.css';

const t = messages.playerMode;

/**
 * Player mode, the layout of a browser that is a player (a tablet a child uses): the page alone,
 * with large controls; the app's menu, signing out and leaving player mode wait behind a small
 * corner control that opens only when held (HoldButton), as a parent does and a child's tap does not.
 */
export function PlayerMode({ onLeave, children }: { onLeave: () => void; children: ComponentChildren }) {
  const open = useSignal(false);
  return (
    <div class="player-mode">
      {children}
      <div class="player-mode-corner">
        {open.value ? (
          <ParentMenu onClose={() => (open.value = false)} onLeave={onLeave} />
        ) : (
          <HoldButton label={t.menu} hint={t.holdHint} onHold={() => (open.value = true)}>
            <span aria-hidden="true">☰</span>
          </HoldButton>
        )}
      </div>
    </div>
  );
}

function ParentMenu({ onClose, onLeave }: { onClose: () => void; onLeave: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    // Opened by a hold, the menu takes the focus, so a keyboard and a screen reader start in it.
    heading.current?.focus();
    const escape = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    addEventListener('keydown', escape);
    return () => removeEventListener('keydown', escape);
  }, []);
  return (
    <section class="parent-menu" aria-labelledby="parent-menu-title">
      <h2 id="parent-menu-title" tabIndex={-1} ref={heading}>
        {t.menu}
      </h2>
      <MainNav current="/be-player" />
      <div class="parent-menu-actions">
        {tokens.value && (
          <button type="button" onClick={() => void signOut()}>
            {messages.nav.signOut}
          </button>
        )}
        <button type="button" onClick={onLeave}>
          {messages.players.forget}
        </button>
        <button type="button" class="primary" onClick={onClose}>
          {t.close}
        </button>
      </div>
    </section>
  );
}
