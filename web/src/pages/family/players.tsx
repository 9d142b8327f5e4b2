import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { api } from '../../api.js';
import { messages } from '../../messages.js';
import { activityOf, sendCommand, usePlayers, type Command, type PlayerView } from '../../player-controls.js';
import { ErrorText, Link } from '../../ui.js';
import { playerPath } from './player-path.js';

const t = messages.players;

/** The Family page's players: live (online or not, what plays), with play/pause, next and volume, and a link to each one's page. */
export function FamilyPlayers() {
  const players = usePlayers();
  const titles = useSignal<Record<string, string>>({});
  const asked = useRef(new Set<string>());
  const error = useSignal<string | undefined>(undefined);
  // The status names the card by id: its title is read once (players play the family's cards, which members may read).
  useEffect(() => {
    for (const { status } of players) {
      const cardId = status?.activeCard;
      if (!cardId || cardId === 'none' || asked.current.has(cardId)) continue;
      asked.current.add(cardId);
      void api.GET('/card/{cardId}', { params: { path: { cardId } } }).then(({ data }) => {
        if (data) titles.value = { ...titles.value, [cardId]: data.card.title };
      });
    }
  }, [players]);
  const send = async (deviceId: string, command: Command) => {
    error.value = await sendCommand(deviceId, command);
  };
  if (players.length === 0) return <p>{messages.family.noPlayers}</p>;
  return (
    <>
      <ErrorText message={error.value} />
      <ul class="players">
        {players.map((view: PlayerView) => {
          const { device, status } = view;
          const online = Boolean(status?.isOnline);
          // An offline player plays nothing, whatever it reported last; a title not read yet shows as an ellipsis, never the id.
          const activity = activityOf(view);
          const card = activity.kind === 'playing' || activity.kind === 'paused' ? (titles.value[activity.cardId] ?? '…') : undefined;
          const playing = activity.kind === 'playing';
          const what = !card ? t.idle : playing ? t.playingCard(card) : t.pausedCard(card);
          return (
            <li key={device.deviceId} data-testid={`player-${device.name}`}>
              <p>{t.state(device.name, online ? t.online : t.offline, what)}</p>
              <p>
                <Link to={playerPath(device.deviceId)}>{messages.playerSettings.open(device.name)}</Link>
              </p>
              <div class="player-controls" role="group" aria-label={device.name}>
                <button type="button" disabled={!online || !card} onClick={() => void send(device.deviceId, { command: playing ? 'pause' : 'resume' })}>
                  {playing ? t.pause(device.name) : t.resume(device.name)}
                </button>
                <button type="button" disabled={!online || !card} onClick={() => void send(device.deviceId, { command: 'next' })}>
                  {t.next(device.name)}
                </button>
                <label for={`volume-${device.deviceId}`}>{t.volume(device.name)}</label>
                <input
                  id={`volume-${device.deviceId}`}
                  type="range"
                  min={0}
                  max={100}
                  step={5}
                  disabled={!online}
                  value={status?.userVolumePercentage ?? 100}
                  onChange={(e) => void send(device.deviceId, { command: 'volume', volume: Number(e.currentTarget.value) })}
                />
              </div>
            </li>
          );
        })}
      </ul>
    </>
  );
}
