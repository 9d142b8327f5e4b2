import { useSignal } from '@preact/signals';
import { useId, useRef } from 'preact/hooks';
import { messages } from './messages.js';
import { activityOf, sendCommand, type PlayerView } from './player-controls.js';
import './play-on-menu.css';

const t = messages.playOnMenu;

/** Which item a key moves to from `index` of `count` (WAI-ARIA menu: arrows wrap; Home, End); undefined for other keys. */
export function menuMove(key: string, index: number, count: number): number | undefined {
  switch (key) {
    case 'ArrowDown':
      return (index + 1) % count;
    case 'ArrowUp':
      return (index - 1 + count) % count;
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return undefined;
  }
}

/** A player's line in the menu: its name and what it does now (offline, nothing, or which card). */
function describe(view: PlayerView, titleOf: (cardId: string) => string | undefined): string {
  const { name } = view.device;
  const activity = activityOf(view);
  if (activity.kind === 'offline') return t.offline(name);
  if (activity.kind === 'idle') return t.online(name);
  const title = titleOf(activity.cardId) ?? t.aCard;
  return activity.kind === 'playing' ? t.playing(name, title) : t.paused(name, title);
}

/**
 * "Play on…" beside a card: one menu button (the WAI-ARIA menu button pattern) listing the
 * family's players with what each is doing; an offline one is listed, marked, and cannot be
 * chosen (the server would refuse it: 409 `device-offline`). The answer (sent, or why not) beside it.
 * `titleOf` names the card a player plays, from what the page has read.
 */
export function PlayOnMenu({ cardId, title, players, titleOf }: { cardId: string; title: string; players: readonly PlayerView[]; titleOf: (cardId: string) => string | undefined }) {
  const open = useSignal(false);
  const outcome = useSignal<{ error: boolean; text: string } | undefined>(undefined);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const id = useId();
  if (players.length === 0) return null;

  const items = (): HTMLElement[] => [...(menu.current?.querySelectorAll<HTMLElement>('[role=menuitem]') ?? [])];
  /** Opens the menu with the focus on item `at` (0 the first, -1 the last), once it is shown. */
  const openAt = (at: number) => {
    open.value = true;
    requestAnimationFrame(() => {
      const all = items();
      all[at < 0 ? all.length + at : at]?.focus();
    });
  };
  const close = (refocus: boolean) => {
    open.value = false;
    if (refocus) button.current?.focus();
  };
  const play = (view: PlayerView) => {
    if (activityOf(view).kind === 'offline') return;
    close(true);
    const { deviceId, name } = view.device;
    void sendCommand(deviceId, { command: 'card-play', cardId }).then((refused) => {
      outcome.value = refused ? { error: true, text: messages.common.error(refused) } : { error: false, text: messages.players.sent(name) };
    });
  };
  const onMenuKey = (event: KeyboardEvent) => {
    const all = items();
    const from = all.indexOf(event.target as HTMLElement);
    const to = menuMove(event.key, from, all.length);
    if (to !== undefined) {
      event.preventDefault();
      all[to]?.focus();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      close(true);
    } else if (event.key === 'Tab') {
      close(false);
    } else if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      const view = players[from];
      if (view) play(view);
    }
  };

  return (
    <div
      class="play-on-menu"
      onFocusOut={(e) => {
        // Focus left the button and its menu (a click elsewhere, Shift+Tab): the menu closes.
        if (open.value && !(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node | null)) open.value = false;
      }}
    >
      <button
        type="button"
        ref={button}
        id={`${id}-button`}
        aria-label={t.label(title)}
        aria-haspopup="menu"
        aria-expanded={open.value}
        aria-controls={`${id}-menu`}
        onClick={() => (open.value ? close(false) : openAt(0))}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
            e.preventDefault();
            openAt(e.key === 'ArrowDown' ? 0 : -1);
          }
        }}
      >
        {t.button}
      </button>
      <div role="menu" id={`${id}-menu`} ref={menu} aria-label={t.menu(title)} hidden={!open.value}>
        {players.map((view) => {
          const offline = activityOf(view).kind === 'offline';
          return (
            <div key={view.device.deviceId} role="menuitem" tabIndex={-1} aria-disabled={offline ? 'true' : undefined} onClick={() => play(view)} onKeyDown={onMenuKey}>
              {describe(view, titleOf)}
            </div>
          );
        })}
      </div>
      {outcome.value && (
        <p role={outcome.value.error ? 'alert' : 'status'} class={outcome.value.error ? 'error' : 'status'}>
          {outcome.value.text}
        </p>
      )}
    </div>
  );
}
