import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PathId, Timestamp } from '../../shared/schemas.js';

/**
 * The devices routes' shapes, as the public service answers them (the public clients' device
 * types, yoto.dev's "devices" pages). Fields a browser player has no counterpart for (battery,
 * Wi-Fi, disk) are answered with neutral values, so clients that read them find their types.
 */

export const DeviceParams = Type.Object({ deviceId: PathId('the device id') });

export const Device = Type.Object(
  {
    deviceId: Type.String(),
    name: Type.String(),
    description: Type.String(),
    online: Type.Boolean({ description: 'the player reported its status lately (docs/api.md, "Players")' }),
    releaseChannel: Type.String(),
    deviceType: Type.String({ examples: ['cardshelf-browser', 'cardshelf-device'] }),
    deviceFamily: Type.String({ description: "the public clients' feature set: 'mini' for a browser player (no nightlight, no light sensor), 'unknown' for a device listed by id" }),
    deviceGroup: Type.String(),
    generation: Type.Optional(Type.String({ description: "a hardware generation ('gen3'); a browser player has none" })),
    formFactor: Type.Optional(Type.String({ description: "'standard' or 'mini' hardware; a browser player has none" })),
  },
  { $id: 'Device', title: 'Device' },
);
export type Device = Static<typeof Device>;

export const DeviceList = Type.Object({ devices: Type.Array(Type.Ref('Device')) });

export const PlaybackStatus = Type.Union([Type.Literal('playing'), Type.Literal('paused'), Type.Literal('stopped')]);

/** What a player reports (`POST /device-v2/{id}/status`): the whole of its state, each time. */
export const StatusReport = Type.Object(
  {
    activeCard: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 128, description: "the card playing; 'none' or null: none" }))),
    chapterKey: Type.Optional(Nullable(Type.String({ maxLength: 128 }))),
    trackKey: Type.Optional(Nullable(Type.String({ maxLength: 128 }))),
    position: Type.Optional(Type.Number({ minimum: 0, maximum: 1e7, description: 'seconds into the track' })),
    trackLength: Type.Optional(Type.Number({ minimum: 0, maximum: 1e7, description: 'seconds' })),
    playbackStatus: Type.Optional(PlaybackStatus),
    userVolumePercentage: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    timezone: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: "the player's time zone, an IANA name ('Europe/London'): the config's `geoTimezone`" }),
    ),
  },
  { additionalProperties: false, title: 'StatusReport' },
);
export type StatusReport = Static<typeof StatusReport>;

/** `GET /device-v2/{id}/status`: the public service's fields, then the player's own. */
export const DeviceStatus = Type.Object(
  {
    deviceId: Type.String(),
    activeCard: Type.String({ description: "the card playing, or 'none'" }),
    ambientLightSensorReading: Type.Number(),
    averageDownloadSpeedBytesSecond: Type.Number(),
    batteryLevelPercentage: Type.Number(),
    batteryLevelPercentageRaw: Type.Number(),
    buzzErrors: Type.Number(),
    cardInsertionState: Type.Integer({ description: '0 none, 2 remote (a card played from the app)' }),
    dayMode: Type.Integer({ description: '-1 unknown' }),
    errorsLogged: Type.Number(),
    firmwareVersion: Type.String(),
    freeDiskSpaceBytes: Type.Number(),
    isAudioDeviceConnected: Type.Boolean(),
    isBackgroundDownloadActive: Type.Boolean(),
    isBluetoothAudioConnected: Type.Boolean(),
    isCharging: Type.Boolean(),
    isNfcLocked: Type.Number(),
    isOnline: Type.Boolean({ description: 'the last report is at most PLAYER_ONLINE_SECONDS old' }),
    networkSsid: Type.String(),
    nightlightMode: Type.String(),
    playingSource: Type.Number(),
    powerCapabilities: Nullable(Type.String()),
    powerSource: Type.Integer(),
    systemVolumePercentage: Type.Number(),
    taskWatchdogTimeoutCount: Type.Number(),
    temperatureCelcius: Type.Union([Type.String(), Type.Number()]),
    totalDiskSpaceBytes: Type.Number(),
    updatedAt: Timestamp,
    uptime: Type.Number(),
    userVolumePercentage: Type.Number(),
    utcOffsetSeconds: Type.Number(),
    utcTime: Type.Number(),
    wifiStrength: Type.Number(),
    chapterKey: Nullable(Type.String()),
    trackKey: Nullable(Type.String()),
    position: Type.Number(),
    trackLength: Type.Number(),
    playbackStatus: PlaybackStatus,
    reportedAt: Nullable(Timestamp),
  },
  { $id: 'DeviceStatus', title: 'DeviceStatus' },
);
export type DeviceStatus = Static<typeof DeviceStatus>;

const TIME = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
const COLOUR = '^(#|0x)?[0-9a-fA-F]{6}$';
const BRIGHTNESS = '^(auto|[0-9]|[1-9][0-9]|100)$';
const VOLUME_LIMIT = '^([0-9]|1[0-6])$';
const FLAG = '^[01]$';
const SECONDS = '^[0-9]{1,6}$';
const CARD_PATH = { maxLength: 256 };

/**
 * The settings of one device, as the public service names and types them (strings where it uses
 * strings). Every field is optional in a write; unknown fields are refused, so a misspelt
 * setting is a 400 rather than stored and ignored.
 */
export const ConfigSettingsInput = Type.Object(
  {
    alarms: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 10 })),
    ambientColour: Type.Optional(Type.String({ pattern: COLOUR })),
    bluetoothEnabled: Type.Optional(Type.String({ pattern: FLAG })),
    btHeadphonesEnabled: Type.Optional(Type.Boolean()),
    clockFace: Type.Optional(Type.String({ maxLength: 64 })),
    dayDisplayBrightness: Type.Optional(Type.String({ pattern: BRIGHTNESS })),
    dayTime: Type.Optional(Type.String({ pattern: TIME })),
    dayYotoDaily: Type.Optional(Type.String(CARD_PATH)),
    dayYotoRadio: Type.Optional(Type.String(CARD_PATH)),
    daySoundsOff: Type.Optional(Type.String({ pattern: FLAG })),
    displayDimBrightness: Type.Optional(Type.String({ pattern: BRIGHTNESS })),
    displayDimTimeout: Type.Optional(Type.String({ pattern: SECONDS })),
    headphonesVolumeLimited: Type.Optional(Type.Boolean()),
    hourFormat: Type.Optional(Type.Union([Type.Literal('12'), Type.Literal('24')])),
    logLevel: Type.Optional(Type.String({ maxLength: 16 })),
    locale: Type.Optional(Type.String({ pattern: '^[a-z]{2}([-_][A-Za-z]{2})?$' })),
    maxVolumeLimit: Type.Optional(Type.String({ pattern: VOLUME_LIMIT })),
    nightAmbientColour: Type.Optional(Type.String({ pattern: COLOUR })),
    nightDisplayBrightness: Type.Optional(Type.String({ pattern: BRIGHTNESS })),
    nightMaxVolumeLimit: Type.Optional(Type.String({ pattern: VOLUME_LIMIT })),
    nightTime: Type.Optional(Type.String({ pattern: TIME })),
    nightYotoDaily: Type.Optional(Type.String(CARD_PATH)),
    nightYotoRadio: Type.Optional(Type.String(CARD_PATH)),
    nightSoundsOff: Type.Optional(Type.String({ pattern: FLAG })),
    pausePowerButton: Type.Optional(Type.Boolean()),
    pauseVolumeDown: Type.Optional(Type.Boolean()),
    repeatAll: Type.Optional(Type.Boolean()),
    showDiagnostics: Type.Optional(Type.Boolean()),
    shutdownTimeout: Type.Optional(Type.String({ pattern: SECONDS })),
    systemVolume: Type.Optional(Type.String({ pattern: '^([0-9]|[1-9][0-9]|100)$' })),
    timezone: Type.Optional(Type.String({ maxLength: 64 })),
    volumeLevel: Type.Optional(Type.String({ maxLength: 16 })),
  },
  { additionalProperties: false, title: 'DeviceConfigSettingsInput' },
);
export type ConfigSettingsInput = Static<typeof ConfigSettingsInput>;
/** Every setting, each with its value or default. */
export type ConfigSettings = Required<ConfigSettingsInput>;

/**
 * `PUT` and `PATCH /device-v2/{id}/config`: the settings sent change; the others keep their values.
 * The public clients send the device's id in the body too (yoto_api: `{"deviceId", "config"}`, the
 * config it read, changed); it must then name the device of the path.
 */
export const ConfigUpdate = Type.Object(
  {
    deviceId: Type.Optional(Type.String({ maxLength: 128, description: "the device's id, as in the path (optional)" })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    config: Type.Optional(ConfigSettingsInput),
  },
  { additionalProperties: false, title: 'DeviceConfigUpdate' },
);
export type ConfigUpdate = Static<typeof ConfigUpdate>;

const ShortcutContent = Type.Object(
  {
    cmd: Type.String({ minLength: 1, maxLength: 64, examples: ['track-play'] }),
    params: Type.Object(
      {
        card: Type.String({ maxLength: 128 }),
        chapter: Type.String({ maxLength: 128 }),
        track: Type.String({ maxLength: 128 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
const ShortcutMode = Type.Object({ content: Type.Array(ShortcutContent, { maxItems: 16 }) }, { additionalProperties: false });

export const Shortcuts = Type.Object(
  {
    versionId: Type.Optional(Type.String({ maxLength: 64 })),
    modes: Type.Object({ day: ShortcutMode, night: ShortcutMode }, { additionalProperties: false }),
  },
  { additionalProperties: false, title: 'DeviceShortcuts' },
);
export type Shortcuts = Static<typeof Shortcuts>;
export const ShortcutsUpdate = Type.Object({ shortcuts: Shortcuts }, { additionalProperties: false });

export const DeviceConfigEnvelope = Type.Object({
  device: Type.Object(
    {
      deviceId: Type.String(),
      name: Type.String(),
      deviceType: Type.String(),
      deviceFamily: Type.String(),
      deviceGroup: Type.String(),
      errorCode: Type.Null(),
      geoTimezone: Nullable(Type.String({ description: 'the time zone the player last reported; null before it reports one' })),
      getPosix: Type.String(),
      mac: Type.String({ description: "a browser player's is a locally administered address made from its id; '' for a device listed by id" }),
      online: Type.Boolean(),
      registrationCode: Type.String(),
      activationPopCode: Type.String(),
      popCode: Type.String(),
      releaseChannelId: Type.String(),
      releaseChannelVersion: Type.String({ description: "a browser player's software: Cardshelf's version; '' for a device listed by id" }),
      fwVersion: Type.String({ description: 'the same as releaseChannelVersion' }),
      status: Type.Object(
        { deviceId: Type.String(), activeCard: Type.String(), updatedAt: Timestamp },
        { additionalProperties: true, description: "the status in the device's own (short) field names" },
      ),
      config: Type.Object({}, { additionalProperties: true, description: 'every setting, with its value or default (docs/api.md)' }),
      shortcuts: Shortcuts,
    },
    { additionalProperties: false },
  ),
});

/**
 * `POST /device-v2/{id}/command`. `command` names what to do; `card-play` takes `cardId` and
 * optionally `chapterKey`, `trackKey` and `secondsIn`; `volume` takes `volume` (0 to 100).
 */
export const DeviceCommand = Type.Object(
  {
    command: Type.Union(
      ['card-play', 'play', 'pause', 'resume', 'stop', 'next', 'previous', 'volume', 'volumeUp', 'volumeDown'].map((c) => Type.Literal(c)),
    ),
    cardId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    chapterKey: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    trackKey: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    secondsIn: Type.Optional(Type.Number({ minimum: 0, maximum: 1e7 })),
    volume: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  },
  { additionalProperties: false, title: 'DeviceCommand' },
);
export type DeviceCommand = Static<typeof DeviceCommand>;

export const CommandAccepted = Type.Object({ status: Type.Literal('ok'), commandId: Type.String() });

/**
 * `POST /device-v2/{id}/command/status`: a request for the player's status, with nothing to say
 * (yoto_api posts `{}`). A command's payload here (yoto-nodejs-client's `sendDeviceCommand` posts
 * its MQTT payloads to this path) is refused rather than ignored: commands have their own route.
 */
export const StatusRequest = Type.Object({}, { additionalProperties: false, title: 'DeviceStatusRequest' });

export const StatusRequested = Type.Object({
  status: Type.Literal('ok'),
  deviceStatus: Type.Ref('DeviceStatus', { description: 'the last status the player reported, as `GET /device-v2/{id}/status` answers it' }),
});

export const PlayerRegistration = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 64, description: 'what the family calls it, such as "Kitchen"' }) },
  { additionalProperties: false, title: 'PlayerRegistration' },
);

export const RegisteredPlayer = Type.Object({
  device: Type.Ref('Device'),
  credential: Type.Object({
    accessToken: Type.String({ description: "the player's bearer token; shown once" }),
    tokenType: Type.Literal('Bearer'),
    expiresAt: Timestamp,
    scope: Type.String(),
  }),
});
