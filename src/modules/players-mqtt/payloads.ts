import type { DeviceStatus } from '../devices/schemas.js';

/**
 * The messages of a player's data topics, in the public service's field names (its MQTT
 * documentation and the public clients' message types), built from the status the player last
 * reported (`GET /device-v2/{id}/status`'s answer). A browser player has no battery, light
 * sensor or disk: those fields carry the same neutral values the REST status does.
 */

/** The public service's volumes in events are on its players' 0-16 scale; the status's are 0-100. */
const VOLUME_STEPS = 16;
const toSteps = (percent: number): number => Math.round((percent / 100) * VOLUME_STEPS);

const seconds = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

/** `data/events`: what is playing. */
export function eventsMessage(status: DeviceStatus): Record<string, unknown> {
  return {
    eventUtc: seconds(status.reportedAt ?? status.updatedAt),
    cardId: status.activeCard,
    ...(status.chapterKey === null ? {} : { chapterKey: status.chapterKey }),
    ...(status.trackKey === null ? {} : { trackKey: status.trackKey }),
    position: Math.floor(status.position),
    trackLength: Math.round(status.trackLength),
    playbackStatus: status.playbackStatus,
    source: 'remote',
    streaming: true,
    repeatAll: false,
    volume: toSteps(status.userVolumePercentage),
    volumeMax: toSteps(status.systemVolumePercentage),
  };
}

/** `data/status`: the player's state, `{"status": {...}}`. */
export function statusMessage(status: DeviceStatus): { status: Record<string, unknown> } {
  return {
    status: {
      statusVersion: 3,
      fwVersion: status.firmwareVersion,
      productType: 'cardshelf-browser',
      activeCard: status.activeCard,
      cardInserted: status.cardInsertionState,
      playingStatus: status.playbackStatus === 'playing' ? 1 : 0,
      batteryLevel: status.batteryLevelPercentage,
      charging: status.isCharging ? 1 : 0,
      als: status.ambientLightSensorReading,
      freeDisk: status.freeDiskSpaceBytes,
      headphones: status.isAudioDeviceConnected ? 1 : 0,
      bluetoothHp: status.isBluetoothAudioConnected ? 1 : 0,
      volume: status.systemVolumePercentage,
      userVolume: status.userVolumePercentage,
      nightlightMode: status.nightlightMode,
      day: status.dayMode,
      utcTime: status.utcTime,
      utcOffset: status.utcOffsetSeconds,
    },
  };
}

/** `status/full` (asked with `command/status`): `data/status` and the extended fields. */
export function statusFullMessage(status: DeviceStatus): { status: Record<string, unknown> } {
  return {
    status: {
      ...statusMessage(status).status,
      battery: 0,
      batteryLevelRaw: status.batteryLevelPercentageRaw,
      powerSrc: status.powerSource,
      ssid: status.networkSsid,
      wifiStrength: status.wifiStrength,
      totalDisk: status.totalDiskSpaceBytes,
      upTime: status.uptime,
      bytesPS: status.averageDownloadSpeedBytesSecond,
      bgDownload: status.isBackgroundDownloadActive ? 1 : 0,
      errorsLogged: status.errorsLogged,
      buzzErrors: status.buzzErrors,
    },
  };
}

/** `presence` (retained): whether the player is online, and since when (ms). */
export const presenceMessage = (online: boolean, at: number): { state: 'online' | 'offline'; ts: number } => ({
  state: online ? 'online' : 'offline',
  ts: at,
});

/**
 * `response`: a command's outcome, `{"status": {"<resource>": "OK"|"FAIL", "req_body": "<the
 * request's payload>"}}` as the public service answers; a refusal also says why, in `message`.
 */
export function responseMessage(key: string, requestBody: string, refusal?: { code: string; message: string }): { status: Record<string, string> } {
  return {
    status: {
      [key]: refusal ? 'FAIL' : 'OK',
      req_body: requestBody,
      ...(refusal ? { error: refusal.code, message: refusal.message } : {}),
    },
  };
}
