import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { api, coverOf, errorMessage, type Card } from '../api.js';
import { tokens } from '../auth.js';
import { messages } from '../messages.js';
import { obey, queueOf, startIndex, unknownCommand, type PlayerCommand, type PlayerState } from '../player-queue.js';
import { loadCredential, storeCredential, type PlayerCredential } from '../player-credential.js';
import { followAsPlayer, playerApi } from '../player-stream.js';
import { useQueuePlayback } from '../queue-playback.js';
import { ErrorText, Page, Status } from '../ui.js';
import { PlayerMode } from './player-mode/player-mode.js';

const t = messages.players;
/** Reports this often while nothing changes: the server counts a player online for 30 s after a report. */
const REPORT_EVERY_MS = 5_000;

/** /app/be-player: registers this browser as a player (a signed-in member), then runs as that player. */
export function BePlayerPage() {
  const credential = useSignal<PlayerCredential | undefined>(loadCredential());
  const name = useSignal('');
  const error = useSignal<string | undefined>(undefined);
  if (credential.value) {
    return (
      <DevicePlayer
        credential={credential.value}
        onForget={() => {
          // The app chose this page for the credential (app.tsx): start it again without one.
          storeCredential(undefined);
          location.assign('/app/family');
        }}
      />
    );
  }
  if (!tokens.value) return null;
  const register = async () => {
    const { data, error: refused, response } = await api.POST('/device-v2/devices/mine', { body: { name: name.value.trim() } });
    if (!data) return void (error.value = errorMessage(refused, response));
    const next = { deviceId: data.device.deviceId, name: data.device.name, accessToken: data.credential.accessToken };
    storeCredential(next);
    credential.value = next;
  };
  return (
    <Page title={t.registerTitle}>
      <p>{t.registerIntro}</p>
      <ErrorText message={error.value} />
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          void register();
        }}
      >
        <label for="player-name">{t.name}</label>
        <input id="player-name" value={name.value} maxLength={64} onInput={(e) => (name.value = e.currentTarget.value)} required />
        <button type="submit" class="primary">
          {t.register}
        </button>
      </form>
    </Page>
  );
}

/** The player itself: obeys its commands, plays, reports; with its credential alone. */
function DevicePlayer({ credential, onForget }: { credential: PlayerCredential; onForget: () => void }) {
  const client = useRef(playerApi(credential)).current;
  const card = useSignal<Card | undefined>(undefined);
  const state = useSignal<PlayerState>({ index: 0, playing: false, volume: 100, stopped: true });
  const connected = useSignal(false);
  const revoked = useSignal(false);
  const error = useSignal<string | undefined>(undefined);
  const audio = useRef<HTMLAudioElement>(null);
  /** Seconds into the track where the next loaded track starts (a card-play's secondsIn). */
  const startAt = useRef(0);
  /** Where a card-play's `cutOff` stops playback: that track (by its place in the queue), at that second. */
  const cutOff = useRef<{ index: number; seconds: number } | undefined>(undefined);
  /** The running sleep timer: a new one replaces it; `0` cancels it. */
  const sleepTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const queue = card.value ? queueOf(card.value) : [];
  const track = queue[state.value.index];

  const report = () => {
    const el = audio.current;
    const now = state.value;
    const current = card.value && !now.stopped ? queueOf(card.value)[now.index] : undefined;
    void client.PUT('/device-v2/{deviceId}/status', {
      params: { path: { deviceId: credential.deviceId } },
      body: {
        activeCard: current && card.value ? card.value.cardId : 'none',
        chapterKey: current?.chapterKey ?? null,
        trackKey: current?.trackKey ?? null,
        position: el && current ? Math.floor(el.currentTime) : 0,
        trackLength: el && current && Number.isFinite(el.duration) ? Math.round(el.duration) : 0,
        playbackStatus: now.stopped ? 'stopped' : now.playing ? 'playing' : 'paused',
        userVolumePercentage: now.volume,
        // The family's apps show it as the player's `geoTimezone`.
        timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      },
    }).then(({ response }) => {
      if (response.status === 401) revoked.value = true;
    }, () => undefined);
  };

  const queueLength = () => (card.value ? queueOf(card.value).length : 0);
  const stop = () => (state.value = obey(state.value, { command: 'stop' }, queueLength()));

  const obeyCommand = async (command: PlayerCommand) => {
    switch (command.command) {
      case 'card-play': {
        const { data, error: refused, response } = await client.GET('/card/{cardId}', { params: { path: { cardId: command.cardId }, query: { playable: 'true' } } });
        if (!data) return void (error.value = errorMessage(refused, response));
        error.value = undefined;
        startAt.current = command.secondsIn ?? 0;
        const index = startIndex(queueOf(data.card), command.chapterKey, command.trackKey);
        cutOff.current = command.cutOff === undefined ? undefined : { index, seconds: command.cutOff };
        // `anyButtonStop`: a browser has no buttons to press; nothing to do.
        card.value = data.card;
        state.value = { ...state.value, index, playing: true, stopped: false };
        return;
      }
      case 'sleep-timer':
        clearTimeout(sleepTimer.current);
        sleepTimer.current = command.seconds > 0 ? setTimeout(stop, command.seconds * 1000) : undefined;
        return;
      case 'play':
      case 'pause':
      case 'resume':
      case 'stop':
      case 'next':
      case 'previous':
      case 'volume':
      case 'volumeUp':
      case 'volumeDown':
        state.value = obey(state.value, command, queueLength());
        return;
      default:
        unknownCommand(command);
    }
  };

  /** A card-play's `cutOff`: stops when its track reaches it (and is forgotten once another track plays). */
  const checkCutOff = (el: HTMLAudioElement) => {
    const at = cutOff.current;
    if (!at) return;
    if (at.index !== state.value.index || state.value.stopped) cutOff.current = undefined;
    else if (el.currentTime >= at.seconds) {
      cutOff.current = undefined;
      stop();
    }
  };

  // The stream: commands for this player, and a report each time it (re)connects.
  useEffect(() => {
    const stop = new AbortController();
    void followAsPlayer(credential, stop.signal, {
      onOpen: () => {
        connected.value = true;
        report();
      },
      onRevoked: () => (revoked.value = true),
      onEvent: (event) => {
        if (event.kind !== 'player.command' || event.ids.deviceId !== credential.deviceId) return;
        void obeyCommand(event.command).catch((err: Error) => (error.value = err.message));
      },
    }).finally(() => (connected.value = false));
    const timer = setInterval(report, REPORT_EVERY_MS);
    // Closed (or left): a last report says it plays nothing, sent even as the page goes
    // (`keepalive`), so the family's apps stop showing it playing at once rather than when its
    // reports lapse (30 s: then it shows as offline).
    const farewell = () =>
      void client
        .PUT('/device-v2/{deviceId}/status', {
          params: { path: { deviceId: credential.deviceId } },
          body: { activeCard: 'none', playbackStatus: 'stopped', userVolumePercentage: state.value.volume },
          keepalive: true,
        })
        .catch(() => undefined);
    addEventListener('pagehide', farewell);
    return () => {
      stop.abort();
      clearInterval(timer);
      clearTimeout(sleepTimer.current);
      removeEventListener('pagehide', farewell);
    };
  }, []);

  // The audio element follows the state (its track, volume, playing or not); each change is reported.
  const playback = useQueuePlayback(audio, state, track && !state.value.stopped ? track.url : undefined, queue.length, report);

  const title = card.value && track && !state.value.stopped ? card.value.title : credential.name;
  const cover = card.value ? coverOf(card.value) : undefined;
  return (
    <PlayerMode onLeave={onForget}>
      <Page title={title}>
        <Status>{revoked.value ? t.revoked : connected.value ? t.connected : t.reconnecting}</Status>
        <ErrorText message={error.value} />
        {playback.needsTap.value && (
          <div class="player-controls">
            <p>{t.startHint}</p>
            <button type="button" class="primary" onClick={playback.start}>
              {t.start}
            </button>
          </div>
        )}
        {track && !state.value.stopped ? (
          <div class="now-playing">
            {cover && <img src={cover} alt={messages.cards.cover(card.value!.title)} class="now-cover" />}
            <p class="now-track">
              {track.icon && <img src={track.icon} alt="" width={64} height={64} class="pixel-icon" />} {t.now(track.chapterTitle, track.title)}
            </p>
          </div>
        ) : (
          <p>{t.waiting(credential.name)}</p>
        )}
        {/* Families' own recordings come without captions or transcripts to offer. */}
        {/* eslint-disable-next-line jsx-a11y/media-has-caption */}
        <audio
          ref={audio}
          src={track && !state.value.stopped ? track.url : undefined}
          preload="auto"
          onLoadedMetadata={(e) => {
            if (startAt.current) e.currentTarget.currentTime = startAt.current;
            startAt.current = 0;
            report();
          }}
          onTimeUpdate={(e) => checkCutOff(e.currentTarget)}
          {...playback.handlers}
        />
        <div class="player-controls">
          <button type="button" onClick={() => void document.documentElement.requestFullscreen?.().catch(() => undefined)}>
            {t.fullScreen}
          </button>
        </div>
      </Page>
    </PlayerMode>
  );
}
