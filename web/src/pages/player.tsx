import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, coverOf, errorMessage, type Card } from '../api.js';
import { Cover } from '../design/cover.js';
import { formatDuration } from '../format.js';
import { messages } from '../messages.js';
import { goTo, isPlaying, loadCard, nowPlaying, playerState, position, seek, togglePlay, trackLength } from '../now-playing.js';
import { signedUrl, type QueuedTrack } from '../player-queue.js';
import { ErrorText, Page, Status } from '../ui.js';

const t = messages.player;

export function PlayerPage({ cardId }: { cardId: string }) {
  const card = useSignal<Card | undefined>(undefined);
  const error = useSignal<string | undefined>(undefined);

  useEffect(() => {
    void api.GET('/content/{cardId}', { params: { path: { cardId }, query: { playable: 'true' } } }).then(({ data, error: e, response }) => {
      if (!data) return void (error.value = errorMessage(e, response));
      loadCard(cardId, data.card);
      card.value = data.card;
    });
  }, [cardId]);

  // The app plays the card (now-playing.tsx): this page shows it and drives it.
  const loaded = nowPlaying.value?.cardId === cardId ? nowPlaying.value : undefined;
  if (!card.value || !loaded) return <Page title={messages.common.loading}><ErrorText message={error.value} /></Page>;
  const tracks = loaded.tracks;
  const current = playerState.value.index;
  const track = tracks[current];
  const playing = isPlaying();
  const chapterStart = (chapter: number) => tracks.findIndex((tr) => tr.chapter === chapter);
  const chapters = card.value.content?.chapters ?? [];
  const cover = coverOf(card.value);
  /** A track of the list: its button, marked while it is the one playing (or paused). */
  const trackButton = (tr: QueuedTrack, label: string) => {
    const i = tracks.indexOf(tr);
    return (
      <button type="button" aria-current={i === current ? 'true' : undefined} onClick={() => goTo(i)}>
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
          <div class="player-controls" role="group" aria-label={t.title(card.value.title)}>
            <button type="button" onClick={() => goTo(chapterStart(track.chapter - 1))} disabled={track.chapter === 0}>
              {t.prevChapter}
            </button>
            <button type="button" onClick={() => goTo(current - 1)} disabled={current === 0}>
              {t.prevTrack}
            </button>
            <button
              type="button"
              class="primary"
              onClick={togglePlay}
            >
              {playing ? t.pause : t.play}
            </button>
            <button type="button" onClick={() => goTo(current + 1)} disabled={current >= tracks.length - 1}>
              {t.nextTrack}
            </button>
            <button type="button" onClick={() => goTo(chapterStart(track.chapter + 1))} disabled={chapterStart(track.chapter + 1) < 0}>
              {t.nextChapter}
            </button>
          </div>
          <div class="seek">
            <label for="seek">{t.seek}</label>
            <input
              id="seek"
              type="range"
              min={0}
              max={Math.max(1, Math.floor(trackLength.value || 0))}
              step={1}
              value={Math.floor(position.value)}
              aria-valuetext={`${formatDuration(position.value)} / ${formatDuration(trackLength.value || 0)}`}
              onInput={(e) => seek(Number(e.currentTarget.value))}
            />
            <span>
              {formatDuration(position.value)} / {formatDuration(trackLength.value || 0)}
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
