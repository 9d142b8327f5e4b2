import type { DeviceRow } from '../../db/database.js';
import { AppError } from '../../shared/errors.js';
import { BROWSER_PLAYER_FAMILY, PLAYER_SOFTWARE_VERSION } from './identity.js';
import type { ConfigSettings, ConfigSettingsInput, Device, DeviceStatus, Shortcuts, StatusReport } from './schemas.js';

/** The devices rules (issue 22, DECISIONS.md "Devices and events"), as pure functions. */

/**
 * A player is online while its last status report is at most this old. A browser player
 * reports every few seconds and on each change (docs/api.md, "Players"), so three missed
 * reports in a row mean it is gone (closed, asleep, or off the network).
 */
export const ONLINE_WINDOW_MS = 30_000;

/** The `deviceType` of a browser registered as a player, and of a device an operator listed by id. */
export const BROWSER_PLAYER = 'cardshelf-browser';

/** Whether the device is a browser registered as a player (else an operator listed it by id). */
export const isBrowserPlayer = (row: Pick<DeviceRow, 'device_type'>): boolean => row.device_type === BROWSER_PLAYER;

/**
 * The count rule of registering: a family holds at most `max` players (PLAYERS_MAX_PER_FAMILY);
 * one more is 400 `device-limit`. The caller counts under the family's lock, so the rule holds
 * under concurrent registrations across instances.
 */
export function checkPlayerLimit(held: number, max: number): void {
  if (held >= max) {
    throw new AppError('device-limit', `a family can have at most ${max} players; remove one to register another`);
  }
}

/**
 * The software a device runs, as its firmware fields say: a browser player runs the web app this
 * server serves (identity.ts); of a device listed by id nothing is known ('').
 */
export const softwareVersionOf = (row: Pick<DeviceRow, 'device_type'>): string => (isBrowserPlayer(row) ? PLAYER_SOFTWARE_VERSION : '');
export const LISTED_DEVICE = 'cardshelf-device';

export function isOnline(statusAt: string | null, nowMs: number): boolean {
  if (statusAt === null) return false;
  const age = nowMs - Date.parse(statusAt);
  return age <= ONLINE_WINDOW_MS;
}

/** The settings of a device that never wrote them: the public service's documented defaults. */
export const DEFAULT_CONFIG: ConfigSettings = {
  alarms: [],
  ambientColour: '#40bfd9',
  bluetoothEnabled: '1',
  btHeadphonesEnabled: true,
  clockFace: 'digital-sun',
  dayDisplayBrightness: 'auto',
  dayTime: '07:00',
  dayYotoDaily: '',
  dayYotoRadio: '',
  daySoundsOff: '0',
  displayDimBrightness: '0',
  displayDimTimeout: '60',
  headphonesVolumeLimited: true,
  hourFormat: '24',
  logLevel: 'none',
  locale: 'en',
  maxVolumeLimit: '16',
  nightAmbientColour: '#f57399',
  nightDisplayBrightness: 'auto',
  nightMaxVolumeLimit: '10',
  nightTime: '19:00',
  nightYotoDaily: '',
  nightYotoRadio: '0',
  nightSoundsOff: '1',
  pausePowerButton: true,
  pauseVolumeDown: false,
  repeatAll: false,
  showDiagnostics: false,
  shutdownTimeout: '3600',
  systemVolume: '100',
  timezone: '',
  volumeLevel: 'safe',
};

export const EMPTY_SHORTCUTS: Shortcuts = { versionId: '', modes: { day: { content: [] }, night: { content: [] } } };

/** The stored settings with the defaults under them; a write keeps what it does not send. */
export function configOf(stored: string | null, update: ConfigSettingsInput = {}): ConfigSettings {
  const saved = stored === null ? {} : (JSON.parse(stored) as ConfigSettingsInput);
  return { ...DEFAULT_CONFIG, ...saved, ...update };
}

export function deviceView(row: DeviceRow, nowMs: number): Device {
  const registered = isBrowserPlayer(row);
  return {
    deviceId: row.device_id,
    name: row.name ?? row.device_id,
    description: registered ? 'a browser registered as a player of the family' : '',
    online: isOnline(row.status_at, nowMs),
    releaseChannel: 'cardshelf',
    deviceType: row.device_type ?? LISTED_DEVICE,
    // `generation` and `formFactor` (optional in the public shapes) are left out: no hardware.
    deviceFamily: registered ? BROWSER_PLAYER_FAMILY : 'unknown',
    deviceGroup: '',
  };
}

/** A report as stored: what the player said, with `activeCard: 'none'` for no card. */
export function normalReport(report: StatusReport): StatusReport {
  const card = report.activeCard ?? 'none';
  return { ...report, activeCard: card };
}

/** `GET /device-v2/{id}/status`: the last report under the public service's fields. */
export function statusView(row: DeviceRow, nowMs: number): DeviceStatus {
  const report = row.status === null ? {} : (JSON.parse(row.status) as StatusReport);
  const activeCard = report.activeCard ?? 'none';
  const volume = report.userVolumePercentage ?? 50;
  const updatedAt = row.status_at ?? row.added_at;
  return {
    deviceId: row.device_id,
    activeCard,
    ambientLightSensorReading: 0,
    averageDownloadSpeedBytesSecond: 0,
    batteryLevelPercentage: 100,
    batteryLevelPercentageRaw: 100,
    buzzErrors: 0,
    cardInsertionState: activeCard === 'none' ? 0 : 2,
    dayMode: -1,
    errorsLogged: 0,
    firmwareVersion: softwareVersionOf(row),
    freeDiskSpaceBytes: 0,
    isAudioDeviceConnected: false,
    isBackgroundDownloadActive: false,
    isBluetoothAudioConnected: false,
    isCharging: false,
    isNfcLocked: 0,
    isOnline: isOnline(row.status_at, nowMs),
    networkSsid: '',
    nightlightMode: 'off',
    playingSource: 0,
    powerCapabilities: null,
    powerSource: 2,
    systemVolumePercentage: 100,
    taskWatchdogTimeoutCount: 0,
    temperatureCelcius: 'notSupported',
    totalDiskSpaceBytes: 0,
    updatedAt,
    uptime: 0,
    userVolumePercentage: volume,
    utcOffsetSeconds: 0,
    utcTime: Math.floor(Date.parse(updatedAt) / 1000),
    wifiStrength: 0,
    chapterKey: report.chapterKey ?? null,
    trackKey: report.trackKey ?? null,
    position: report.position ?? 0,
    trackLength: report.trackLength ?? 0,
    playbackStatus: report.playbackStatus ?? 'stopped',
    reportedAt: row.status_at,
  };
}

/** The status in the short field names the public service's config answer uses. */
export function rawStatusView(status: DeviceStatus): Record<string, unknown> {
  return {
    deviceId: status.deviceId,
    activeCard: status.activeCard,
    batteryLevel: status.batteryLevelPercentage,
    cardInserted: status.cardInsertionState,
    charging: 0,
    day: status.dayMode,
    fwVersion: status.firmwareVersion,
    playingStatus: status.playbackStatus === 'playing' ? 1 : 0,
    powerSrc: status.powerSource,
    updatedAt: status.updatedAt,
    userVolume: status.userVolumePercentage,
    volume: status.systemVolumePercentage,
  };
}

/** Why a report cannot be stored (a 400): a time zone the runtime's time zone data does not know. */
export function reportProblem(report: StatusReport): string | undefined {
  if (report.timezone === undefined) return undefined;
  try {
    new Intl.DateTimeFormat('en', { timeZone: report.timezone });
    return undefined;
  } catch {
    return `'${report.timezone}' is not a time zone (an IANA name such as 'Europe/London')`;
  }
}

/** The time zone a player last reported, or null. */
export function reportedTimezone(row: Pick<DeviceRow, 'status'>): string | null {
  return row.status === null ? null : ((JSON.parse(row.status) as StatusReport).timezone ?? null);
}

/**
 * yoto-js's typed device writes send fields of its own that the public documentation's routes do
 * not take (`PATCH .../config` `{maxVolume, volume, ambientColor, nightLightEnabled}`, `PUT
 * .../shortcuts` `{shortcuts: [{position, contentId}]}`). None maps onto one documented setting
 * without a guess (a volume limit of 0 to 16 from a number the client's own example gives as 80; a
 * colour of the day or of the night), so the documented shape is the only one taken (DECISIONS.md)
 * and each of these is refused with what to send instead.
 */
const CLIENT_CONFIG_FIELDS: Record<string, string> = {
  maxVolume:
    "send config.maxVolumeLimit (day) and config.nightMaxVolumeLimit (night), strings '0' to '16': steps of the player's volume, not a percentage",
  volume:
    'the volume playing is a command (POST /device-v2/{id}/command {"command": "volume", "volume": 0-100}); the setting config.systemVolume is a string \'0\' to \'100\'',
  ambientColor: "send config.ambientColour (day) or config.nightAmbientColour (night), '#rrggbb'",
  nightLightEnabled: 'the public service has no such setting, and a browser player has no nightlight',
};

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Why a config write in a client's own fields cannot be taken (a 400), or undefined. */
export function clientConfigProblem(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const field = Object.keys(CLIENT_CONFIG_FIELDS).find((name) => name in body);
  return field === undefined ? undefined : `'${field}' is not a field of this route: ${CLIENT_CONFIG_FIELDS[field]}`;
}

/** Why a shortcuts write as a client's list cannot be taken (a 400), or undefined. */
export function clientShortcutsProblem(body: unknown): string | undefined {
  if (!isRecord(body) || !Array.isArray(body.shortcuts)) return undefined;
  return (
    '\'shortcuts\' is an object, {"modes": {"day": {"content": [...]}, "night": {"content": [...]}}}, each content ' +
    '{"cmd": "track-play", "params": {"card", "chapter", "track"}}: a list of {position, contentId} names neither the mode nor the chapter and track'
  );
}

/**
 * Why a status request cannot be taken (a 400), or undefined: it takes no fields. A command's
 * payload posted here (yoto-nodejs-client's `sendDeviceCommand`, `{"volume": 50}`) is refused, not
 * taken as a status request and its command dropped.
 */
export function statusRequestProblem(body: unknown): string | undefined {
  if (!isRecord(body) || Object.keys(body).length === 0) return undefined;
  return (
    `a status request takes no fields ('${Object.keys(body)[0]}'): send commands to POST /device-v2/{id}/command, ` +
    'or publish them over MQTT (device/{id}/command/...)'
  );
}
