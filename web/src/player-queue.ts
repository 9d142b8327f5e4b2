import type { components } from './api-types.js';

type Card = components['schemas']['Card'];

/**
 * What a browser player plays and how it obeys a command (docs/api.md, "Players (devices)"):
 * pure, so test/unit covers it without a browser; queue-playback.ts plays it, for the browser
 * player (pages/player-device.tsx) and the card's own player (pages/player.tsx) alike.
 */

/** One track of a card, in play order, with the keys a status report names. */
export interface QueuedTrack {
  chapter: number;
  chapterKey: string;
  trackKey: string;
  chapterTitle: string;
  title: string;
  url: string;
  icon: string | undefined;
}

/** A media reference signed for reading (`playable=true`), or undefined for one kept as written. */
export const signedUrl = (value: string | null | undefined): string | undefined => (value && /^https?:/.test(value) ? value : undefined);

/** The card's playable tracks (signed URLs of a `playable=true` read) in order; media references are skipped. */
export function queueOf(card: Card): QueuedTrack[] {
  return (card.content?.chapters ?? []).flatMap((c, i) =>
    c.tracks
      .filter((tr) => signedUrl(tr.trackUrl))
      .map((tr) => ({
        chapter: i,
        chapterKey: c.key,
        trackKey: tr.key,
        chapterTitle: c.title ?? String(i + 1),
        title: tr.title ?? '',
        url: tr.trackUrl,
        icon: signedUrl(tr.display?.icon16x16 ?? c.display?.icon16x16),
      })),
  );
}

/** Where a `card-play` starts: the track named, else the chapter's first, else the card's first. */
export function startIndex(queue: readonly QueuedTrack[], chapterKey?: string, trackKey?: string): number {
  const exact = queue.findIndex((t) => t.chapterKey === chapterKey && t.trackKey === trackKey);
  if (exact >= 0) return exact;
  const chapter = chapterKey === undefined ? -1 : queue.findIndex((t) => t.chapterKey === chapterKey);
  return Math.max(0, chapter);
}

/** A command as it arrives on the stream (`player.command` event's `command`), as the server's `DeviceCommand` says. */
export type PlayerCommand = components['schemas']['DeviceCommand'];
/** The commands that only change the state (`card-play` reads the card first; `sleep-timer` sets a timer): `obey` takes these. */
export type StateCommand = Exclude<PlayerCommand, { command: 'card-play' | 'sleep-timer' }>;

/** The player's state that commands change (the card itself is loaded by the page). */
export interface PlayerState {
  index: number;
  playing: boolean;
  /** 0 to 100, as the status reports it. */
  volume: number;
  stopped: boolean;
}

/** The state when a track ends: the next track, or, after the card's last, stopped at its start. */
export function afterTrack(state: PlayerState, queueLength: number): PlayerState {
  return state.index >= queueLength - 1 ? { ...state, playing: false, stopped: true, index: 0 } : { ...state, index: state.index + 1 };
}

/** A volume step of volumeUp/volumeDown: the public service's 16 steps over 0-100. */
const VOLUME_STEP = 100 / 16;
const clampVolume = (v: number): number => Math.round(Math.min(100, Math.max(0, v)));

/**
 * The state after a command that changes only the state. `next` past the last track and
 * `previous` before the first stay where they are.
 */
export function obey(state: PlayerState, command: StateCommand, queueLength: number): PlayerState {
  switch (command.command) {
    case 'pause':
      return { ...state, playing: false };
    case 'play':
    case 'resume':
      return { ...state, playing: queueLength > 0, stopped: false };
    case 'stop':
      return { ...state, playing: false, stopped: true, index: 0 };
    case 'next':
      return { ...state, index: Math.min(state.index + 1, Math.max(0, queueLength - 1)) };
    case 'previous':
      return { ...state, index: Math.max(0, state.index - 1) };
    case 'volume':
      return { ...state, volume: clampVolume(command.volume) };
    case 'volumeUp':
      return { ...state, volume: clampVolume(state.volume + VOLUME_STEP) };
    case 'volumeDown':
      return { ...state, volume: clampVolume(state.volume - VOLUME_STEP) };
    default:
      return unknownCommand(command);
  }
}

/**
 * A command this build does not know: the server's schema and these types come from one
 * document, so only a page older than the server (open across an upgrade) meets one; it says
 * so rather than ignoring it. `never`: a command added to the schema fails this file's build.
 */
export function unknownCommand(command: never): never {
  throw new Error(`this player does not know the command ${JSON.stringify(command)}; reload the page`);
}
