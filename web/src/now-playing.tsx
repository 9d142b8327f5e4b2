import { signal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { coverOf, type Card } from './api.js';
import { Cover } from './design/cover.js';
import { messages } from './messages.js';
import { queueOf, type PlayerState, type QueuedTrack } from './player-queue.js';
import { useQueuePlayback } from './queue-playback.js';
import { path } from './router.js';
import { Link } from './ui.js';

/**
 * The card this browser plays, app-wide: one `<audio>` element outside the pages, so a card
 * started on its page plays on while the person moves about the app, and a bar at the bottom
 * (title, play/pause, a link back) follows them. The card page (pages/player.tsx) is a view of
 * this store and drives it; nothing else starts playback.
 */
export interface Playing {
  cardId: string;
  title: string;
  cover: string | undefined;
  tracks: QueuedTrack[];
}

export const nowPlaying = signal<Playing | undefined>(undefined);
// The card page has no volume of its own (the device's is the one): 100 is the element's full volume.
export const playerState = signal<PlayerState>({ index: 0, playing: false, volume: 100, stopped: false });
/** Seconds into the current track, and its length (0 until its metadata is read). */
export const position = signal(0);
export const trackLength = signal(0);
/** The browser refused to play without a gesture: the next tap on Play is that gesture. */
const needsTap = signal(false);
/** Once a card has played, the bar shows it on the other pages until another card is loaded. */
const started = signal(false);
const audio: { current: HTMLAudioElement | null } = { current: null };
let start: () => void = () => undefined;
/** Where to seek once the track's metadata is read (a card resumed at its saved place). */
let resumeAt = 0;

/** Where a card stopped, per card, in this browser: a story resumes there. */
const positionKey = (cardId: string): string => `cardshelf:position:${cardId}`;
interface Position {
  track: number;
  time: number;
}
function savePosition(): void {
  const card = nowPlaying.value;
  if (card) localStorage.setItem(positionKey(card.cardId), JSON.stringify({ track: playerState.value.index, time: audio.current?.currentTime ?? 0 } satisfies Position));
}

/**
 * Makes `card` (read with `playable=true`) the one the app plays, at its saved place, paused. The
 * card already loaded keeps its tracks: a fresh read signs its URLs anew, and a changed URL would
 * restart the track playing.
 */
export function loadCard(cardId: string, card: Card): void {
  if (nowPlaying.value?.cardId === cardId) {
    nowPlaying.value = { ...nowPlaying.value, title: card.title, cover: coverOf(card) };
    return;
  }
  savePosition();
  const saved = JSON.parse(localStorage.getItem(positionKey(cardId)) ?? 'null') as Position | null;
  resumeAt = saved?.time ?? 0;
  started.value = false;
  position.value = 0;
  trackLength.value = 0;
  playerState.value = { ...playerState.value, index: saved?.track ?? 0, playing: false, stopped: false };
  nowPlaying.value = { cardId, title: card.title, cover: coverOf(card), tracks: queueOf(card) };
}

/** Plays or pauses the card loaded (from a tap: the gesture a browser may want first). */
export function togglePlay(): void {
  if (needsTap.value) return start();
  const { playing } = playerState.value;
  playerState.value = { ...playerState.value, playing: !playing, stopped: false };
}

/** Whether the card loaded plays now (as the person sees it: not while the browser waits for a tap). */
export const isPlaying = (): boolean => playerState.value.playing && !needsTap.value;

/** Moves to track `index` of the card loaded, from its start. */
export function goTo(index: number): void {
  const count = nowPlaying.value?.tracks.length ?? 0;
  if (index < 0 || index >= count) return;
  resumeAt = 0;
  playerState.value = { ...playerState.value, index, stopped: false };
}

export function seek(seconds: number): void {
  if (audio.current) audio.current.currentTime = seconds;
}

/** The app's one `<audio>` for cards, and the now-playing bar on every page but the card's own. */
export function NowPlaying() {
  const ref = useRef<HTMLAudioElement>(null);
  const card = nowPlaying.value;
  const tracks = card?.tracks ?? [];
  const track = tracks[playerState.value.index];
  const playback = useQueuePlayback(ref, playerState, track?.url, tracks.length);
  audio.current = ref.current;
  start = playback.start;
  useEffect(() => {
    audio.current = ref.current;
    needsTap.value = playback.needsTap.value;
  });
  if (!card || !track) return null;
  const onItsPage = path.value === `/play/${encodeURIComponent(card.cardId)}`;
  const playing = isPlaying();
  return (
    <>
      {/* Families' own recordings come without captions or transcripts to offer. */}
      {/* eslint-disable-next-line jsx-a11y/media-has-caption */}
      <audio
        ref={ref}
        src={track.url}
        preload="metadata"
        onLoadedMetadata={(e) => {
          trackLength.value = e.currentTarget.duration;
          if (resumeAt) e.currentTarget.currentTime = resumeAt;
          resumeAt = 0;
        }}
        onTimeUpdate={(e) => {
          position.value = e.currentTarget.currentTime;
          savePosition();
        }}
        onPlay={() => {
          started.value = true;
          playback.handlers.onPlay();
        }}
        onPause={() => {
          playback.handlers.onPause();
          savePosition();
        }}
        onEnded={playback.handlers.onEnded}
      />
      {started.value && !onItsPage && <div class="now-bar-space" />}
      {started.value && !onItsPage && (
        <section class="now-bar" aria-label={messages.nowPlaying.label}>
          <Cover cardId={card.cardId} title={card.title} src={card.cover} />
          <p class="now-bar-title">
            <Link to={`/play/${encodeURIComponent(card.cardId)}`}>{card.title}</Link>
            <span class="meta">{messages.player.now(track.chapterTitle, track.title)}</span>
          </p>
          <button type="button" class="primary" onClick={togglePlay} aria-label={playing ? messages.nowPlaying.pause(card.title) : messages.nowPlaying.play(card.title)}>
            <span aria-hidden="true">{playing ? '❚❚' : '▶'}</span>
          </button>
        </section>
      )}
    </>
  );
}
