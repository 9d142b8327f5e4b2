import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { api, coverOf, errorMessage, type Card } from '../api.js';
import { Cover } from '../design/cover.js';
import { formatDuration } from '../format.js';
import { messages } from '../messages.js';
import { queueOf, signedUrl, type PlayerState, type QueuedTrack } from '../player-queue.js';
import { useQueuePlayback } from '../queue-playback.js';
import { ErrorText, Page, Status } from '../ui.js';

const t = messages.player;

/** Where a card stopped, per card, in this browser: a story resumes there. */
const positionKey = (cardId: string): string => `cardshelf:position:${cardId}`;
interface Position {
  track: number;
  time: number;
}

export function PlayerPage({ cardId }: { cardId: string }) {
  const card = useSignal<Card | undefined>(undefined);
  const error = useSignal<string | undefined>(undefined);
  // The card page has no volume of its own (the device's is the one): 100 is the element's full volume.
  const state = useSignal<PlayerState>({ index: 0, playing: false, volume: 100, stopped: false });
  const time = useSignal(0);
  const duration = useSignal(0);
  const audio = useRef<HTMLAudioElement>(null);
  const resumeAt = useRef<number>(0);

  useEffect(() => {
    void api.GET('/content/{cardId}', { params: { path: { cardId }, query: { playable: 'true' } } }).then(({ data, error: e, response }) => {
      if (!data) return void (error.value = errorMessage(e, response));
      const saved = JSON.parse(localStorage.getItem(positionKey(cardId)) ?? 'null') as Position | null;
      if (saved) {
        state.value = { ...state.value, index: saved.track };
        resumeAt.current = saved.time;
      }
      card.value = data.card;
    });
  }, [cardId]);

  const tracks = card.value ? queueOf(card.value) : [];
  const current = state.value.index;
  const track = tracks[current];
  const playback = useQueuePlayback(audio, state, track?.url, tracks.length);
  const playing = state.value.playing && !playback.needsTap.value;
  const go = (index: number) => {
    if (index < 0 || index >= tracks.length) return;
    resumeAt.current = 0;
    state.value = { ...state.value, index, stopped: false };
  };
  const chapterStart = (chapter: number) => tracks.findIndex((tr) => tr.chapter === chapter);
  const save = () => localStorage.setItem(positionKey(cardId), JSON.stringify({ track: state.value.index, time: audio.current?.currentTime ?? 0 } satisfies Position));

  if (!card.value) return <Page title={messages.common.loading}><ErrorText message={error.value} /></Page>;
  const chapters = card.value.content?.chapters ?? [];
  const cover = coverOf(card.value);
  /** A track of the list: its button, marked while it is the one playing (or paused). */
  const trackButton = (tr: QueuedTrack, label: string) => {
    const i = tracks.indexOf(tr);
    return (
      <button type="button" aria-current={i === current ? 'true' : undefined} onClick={() => go(i)}>
        {tr.icon ? <img src={tr.icon} alt="" width={16} height={16} class="pixel-icon" /> : null} {label}
      </button>
    );
  };
  return (
    <Page title={t.title(card.value.title)}>
      <Cover cardId={cardId} title={card.value.title} src={cover} class="player-cover" />
      {!track ? (
        <p>{t.nothing}</p>
      ) : (
        <>
          <Status>{t.now(track.chapterTitle, track.title)}</Status>
          {/* Families' own recordings come without captions or transcripts to offer. */}
          {/* eslint-disable-next-line jsx-a11y/media-has-caption */}
          <audio
            ref={audio}
            src={track.url}
            preload="metadata"
            onLoadedMetadata={(e) => {
              duration.value = e.currentTarget.duration;
              if (resumeAt.current) e.currentTarget.currentTime = resumeAt.current;
              resumeAt.current = 0;
            }}
            onTimeUpdate={(e) => {
              time.value = e.currentTarget.currentTime;
              save();
            }}
            onPlay={playback.handlers.onPlay}
            onPause={() => {
              playback.handlers.onPause();
              save();
            }}
            onEnded={playback.handlers.onEnded}
          />
          <div class="player-controls" role="group" aria-label={t.title(card.value.title)}>
            <button type="button" onClick={() => go(chapterStart(track.chapter - 1))} disabled={track.chapter === 0}>
              {t.prevChapter}
            </button>
            <button type="button" onClick={() => go(current - 1)} disabled={current === 0}>
              {t.prevTrack}
            </button>
            <button
              type="button"
              class="primary"
              onClick={() => (playback.needsTap.value ? playback.start() : (state.value = { ...state.value, playing: !playing, stopped: false }))}
            >
              {playing ? t.pause : t.play}
            </button>
            <button type="button" onClick={() => go(current + 1)} disabled={current >= tracks.length - 1}>
              {t.nextTrack}
            </button>
            <button type="button" onClick={() => go(chapterStart(track.chapter + 1))} disabled={chapterStart(track.chapter + 1) < 0}>
              {t.nextChapter}
            </button>
          </div>
          <div class="seek">
            <label for="seek">{t.seek}</label>
            <input
              id="seek"
              type="range"
              min={0}
              max={Math.max(1, Math.floor(duration.value || 0))}
              step={1}
              value={Math.floor(time.value)}
              aria-valuetext={`${formatDuration(time.value)} / ${formatDuration(duration.value || 0)}`}
              onInput={(e) => {
                if (audio.current) audio.current.currentTime = Number(e.currentTarget.value);
              }}
            />
            <span>
              {formatDuration(time.value)} / {formatDuration(duration.value || 0)}
            </span>
          </div>
        </>
      )}
      <h2>{t.tracks}</h2>
      {/* A chapter of one track is that track's button; a chapter of several lists them under its title. */}
      <ol class="chapter-list">
        {chapters.map((c, i) => {
          const its = tracks.filter((tr) => tr.chapter === i);
          const icon = signedUrl(c.display?.icon16x16);
          const name = t.numbered(i + 1, c.title ?? '');
          return (
            <li key={c.key}>
              {its.length === 1 ? (
                trackButton(its[0]!, name)
              ) : (
                <>
                  <span class="chapter-name">
                    {icon ? <img src={icon} alt="" width={16} height={16} class="pixel-icon" /> : null} {name}
                  </span>
                  {its.length > 0 && (
                    <ol class="track-list">
                      {its.map((tr, j) => (
                        <li key={tr.trackKey}>{trackButton(tr, t.numbered(j + 1, tr.title))}</li>
                      ))}
                    </ol>
                  )}
                </>
              )}
            </li>
          );
        })}
      </ol>
    </Page>
  );
}
