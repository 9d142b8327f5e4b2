import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, errorMessage } from './api.js';
import type { components, paths } from './api-types.js';
import { useLiveEvents } from './events.js';
import { messages } from './messages.js';

/**
 * The family's players as members see and command them (docs/api.md, "Players (devices)"): the
 * list with each one's last status, kept live by `player.*` events, and the commands.
 */
const t = messages.players;
export type Device = components['schemas']['Device'];
export type DeviceStatus = components['schemas']['DeviceStatus'];
export type Command = paths['/device-v2/{deviceId}/command']['post']['requestBody']['content']['application/json'];

export interface PlayerView {
  device: Device;
  status: DeviceStatus | undefined;
}

/** The family's players and their statuses, read again on each `player.*` event (and `family.changed`). */
export function usePlayers(): PlayerView[] {
  const players = useSignal<PlayerView[]>([]);
  const load = async () => {
    const { data } = await api.GET('/device-v2/devices/mine');
    const devices = data?.devices ?? [];
    players.value = await Promise.all(
      devices.map(async (device) => ({ device, status: (await api.GET('/device-v2/{deviceId}/status', { params: { path: { deviceId: device.deviceId } } })).data })),
    );
  };
  useEffect(() => void load(), []);
  useLiveEvents(['player.', 'family.changed'], load);
  return players.value;
}

/** Sends a command; answers the server's refusal as it is (a 409 says the player is offline), or undefined. */
export async function sendCommand(deviceId: string, command: Command): Promise<string | undefined> {
  const { error, response } = await api.POST('/device-v2/{deviceId}/command', { params: { path: { deviceId } }, body: command });
  return error ? errorMessage(error, response) : undefined;
}

/** "Play on Kitchen" beside a card: one button per player; the answer (sent, or why not) beside them. */
export function PlayOn({ cardId, title, players }: { cardId: string; title: string; players: readonly PlayerView[] }) {
  const outcome = useSignal<{ error: boolean; text: string } | undefined>(undefined);
  if (players.length === 0) return null;
  return (
    <div class="play-on">
      {players.map(({ device }) => (
        <button
          key={device.deviceId}
          type="button"
          aria-label={t.playCardOn(title, device.name)}
          onClick={() =>
            void sendCommand(device.deviceId, { command: 'card-play', cardId }).then((refused) => {
              outcome.value = refused ? { error: true, text: messages.common.error(refused) } : { error: false, text: t.sent(device.name) };
            })
          }
        >
          {t.playOn(device.name)}
        </button>
      ))}
      {outcome.value && (
        <p role={outcome.value.error ? 'alert' : 'status'} class={outcome.value.error ? 'error' : 'status'}>
          {outcome.value.text}
        </p>
      )}
    </div>
  );
}
