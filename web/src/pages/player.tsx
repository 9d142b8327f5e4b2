import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { api, errorMessage, type Card } from '../api.js';
import { formatDuration } from '../format.js';
import { messages } from '../messages.js';
import { queueOf, signedUrl } from '../player-queue.js';
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
  const current = useSignal(0);
  const playing = useSignal(false);
  const time = useSignal(0);
  const duration = useSignal(0);
  const audio = useRef<HTMLAudioElement>(null);
  const resumeAt = useRef<number>(0);

  useEffect(() => {
    void api.GET('/content/{cardId}', { params: { path: { cardId }, query: { playable: 'true' } } }).then(({ data, error: e, response }) => {
      if (!data) return void (error.value = errorMessage(e, response));
      const saved = JSON.parse(localStorage.getItem(positionKey(cardId)) ?? 'null') as Position | null;
      if (saved) {
        current.value = saved.track;
        resumeAt.current = saved.time;
      }
      card.value = data.card;
    });
  }, [cardId]);

  const tracks = card.value ? queueOf(card.value) : [];
  const track = tracks[current.value];
  const go = (index: number) => {
    if (index < 0 || index >= tracks.length) return;
    resumeAt.current = 0;
    current.value = index;
    const el = audio.current;
    if (el && playing.value) queueMicrotask(() => void el.play());
  };
  const chapterStart = (chapter: number) => tracks.findIndex((tr) => tr.chapter === chapter);
  const save = () => localStorage.setItem(positionKey(cardId), JSON.stringify({ track: current.value, time: audio.current?.currentTime ?? 0 } satisfies Position));

  if (!card.value) return <Page title={messages.common.loading}><ErrorText message={error.value} /></Page>;
  const chapters = card.value.content?.chapters ?? [];
  return (
    <Page title={t.title(card.value.title)}>
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
            }}
            onTimeUpdate={(e) => {
              time.value = e.currentTarget.currentTime;
              save();
            }}
            onPlay={() => (playing.value = true)}
            onPause={() => {
              playing.value = false;
              save();
            }}
            onEnded={() => go(current.value + 1)}
          />
          <div class="player-controls" role="group" aria-label={t.title(card.value.title)}>
            <button type="button" onClick={() => go(chapterStart(track.chapter - 1))} disabled={track.chapter === 0}>
              {t.prevChapter}
            </button>
            <button type="button" onClick={() => go(current.value - 1)} disabled={current.value === 0}>
              {t.prevTrack}
            </button>
            <button type="button" class="primary" onClick={() => (playing.value ? audio.current?.pause() : void audio.current?.play())}>
              {playing.value ? t.pause : t.play}
            </button>
            <button type="button" onClick={() => go(current.value + 1)} disabled={current.value >= tracks.length - 1}>
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
      <h2>{t.chapters}</h2>
      <ol class="chapter-list">
        {chapters.map((c, i) => {
          const icon = signedUrl(c.display?.icon16x16);
          return (
            <li key={c.key}>
              <button type="button" aria-current={track?.chapter === i ? 'true' : undefined} disabled={chapterStart(i) < 0} onClick={() => go(chapterStart(i))}>
                {icon ? <img src={icon} alt="" width={16} height={16} /> : null} {t.chapterButton(i + 1, c.title ?? '')}
              </button>
            </li>
          );
        })}
      </ol>
    </Page>
  );
}
