import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { api, errorMessage } from './api.js';
import type { components, paths } from './api-types.js';
import { useLiveEvents } from './events.js';

/**
 * The family's players as members see and command them (docs/api.md, "Players (devices)"): the
 * list with each one's last status, kept live by `player.*` events, and the commands.
 */
export type Device = components['schemas']['Device'];
export type DeviceStatus = components['schemas']['DeviceStatus'];
export type Command = paths['/device-v2/{deviceId}/command']['post']['requestBody']['content']['application/json'];

export interface PlayerView {
  device: Device;
  status: DeviceStatus | undefined;
}

/**
 * A player is online while its last report is at most 30 s old (docs/api.md, "Players"); no event
 * says when that lapses (a closed tab, a sleeping tablet just stop reporting). So while any player
 * is online the statuses are read again this long after the last read: each report's event reads
 * them sooner, and a player that went silent reads as offline at the latest this long after.
 */
const LAPSE_MS = 31_000;

/** What a player is doing, as the app shows it: a player offline plays nothing, whatever it said last. */
export type PlayerActivity = { kind: 'offline' } | { kind: 'idle' } | { kind: 'playing' | 'paused'; cardId: string };

export function activityOf({ status }: PlayerView): PlayerActivity {
  if (!status?.isOnline) return { kind: 'offline' };
  if (status.activeCard === 'none' || status.playbackStatus === 'stopped') return { kind: 'idle' };
  return { kind: status.playbackStatus === 'playing' ? 'playing' : 'paused', cardId: status.activeCard };
}

/** The family's players and their statuses, read again on each `player.*` event (and `family.changed`), and as an online one's status lapses. */
export function usePlayers(): PlayerView[] {
  const players = useSignal<PlayerView[]>([]);
  const lapse = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const load = async () => {
    const { data } = await api.GET('/device-v2/devices/mine');
    const devices = data?.devices ?? [];
    players.value = await Promise.all(
      devices.map(async (device) => ({ device, status: (await api.GET('/device-v2/{deviceId}/status', { params: { path: { deviceId: device.deviceId } } })).data })),
    );
    clearTimeout(lapse.current);
    if (players.value.some((p) => p.status?.isOnline)) lapse.current = setTimeout(() => void load(), LAPSE_MS);
  };
  useEffect(() => {
    void load();
    return () => clearTimeout(lapse.current);
  }, []);
  useLiveEvents(['player.', 'family.changed'], load);
  return players.value;
}

/** Sends a command; answers the server's refusal as it is (a 409 says the player is offline), or undefined. */
export async function sendCommand(deviceId: string, command: Command): Promise<string | undefined> {
  const { error, response } = await api.POST('/device-v2/{deviceId}/command', { params: { path: { deviceId } }, body: command });
  return error ? errorMessage(error, response) : undefined;
}
