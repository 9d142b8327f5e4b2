import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PathId, TaggedUnion, Timestamp } from '../../shared/schemas.js';

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

const CardKey = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });
/** `volumeUp` -> `VolumeUpCommand`: each command's schema is a named component of the document. */
const idOf = (name: string): string => `${name.replace(/(^|-)(.)/g, (_m, _dash: string, c: string) => c.toUpperCase())}Command`;
const bareCommand = <N extends string>(name: N, description: string) =>
  Type.Object({ command: Type.Literal(name) }, { additionalProperties: false, $id: idOf(name), description });

/** The longest sleep timer: a day. */
export const MAX_SLEEP_TIMER_SECONDS = 86_400;

/**
 * Each command a player obeys, by name, with its own fields: `POST /device-v2/{id}/command`
 * takes them as they are here, the MQTT bridge maps its topics onto them, and the browser player
 * handles each (web/src/pages/player-device.tsx). A field a command does not take is refused.
 */
export const DEVICE_COMMAND_SCHEMAS = {
  'card-play': Type.Object(
    {
      command: Type.Literal('card-play'),
      cardId: CardKey('the card to play (one the family may play)'),
      chapterKey: Type.Optional(CardKey('the chapter to start at (else the first)')),
      trackKey: Type.Optional(CardKey("the track to start at (else the chapter's first)")),
      secondsIn: Type.Optional(Type.Number({ minimum: 0, maximum: 1e7, description: 'seconds into the first track to start at' })),
      cutOff: Type.Optional(
        Type.Integer({ minimum: 0, maximum: 1e7, description: 'seconds into the first track to stop at (playback stops there; at or before `secondsIn`: at once)' }),
      ),
      anyButtonStop: Type.Optional(Type.Boolean({ description: "whether a press of the player's buttons stops playback; a browser player has no buttons: accepted, without effect" })),
    },
    { additionalProperties: false, $id: idOf('card-play'), description: 'play a card, from the start or at a chapter, track and offset' },
  ),
  play: bareCommand('play', 'play (the card loaded)'),
  pause: bareCommand('pause', 'pause'),
  resume: bareCommand('resume', 'resume after a pause'),
  stop: bareCommand('stop', 'stop, back at the start of the card'),
  next: bareCommand('next', 'the next track (stays on the last)'),
  previous: bareCommand('previous', 'the previous track (stays on the first)'),
  volume: Type.Object(
    { command: Type.Literal('volume'), volume: Type.Integer({ minimum: 0, maximum: 100, description: 'the volume, 0 to 100' }) },
    { additionalProperties: false, $id: idOf('volume'), description: 'set the volume' },
  ),
  volumeUp: bareCommand('volumeUp', 'one step (of 16) louder'),
  volumeDown: bareCommand('volumeDown', 'one step (of 16) quieter'),
  'sleep-timer': Type.Object(
    {
      command: Type.Literal('sleep-timer'),
      seconds: Type.Integer({ minimum: 0, maximum: MAX_SLEEP_TIMER_SECONDS, description: 'stop playing after this many seconds; 0 cancels the timer' }),
    },
    { additionalProperties: false, $id: idOf('sleep-timer'), description: 'start (or restart: it replaces the one running) or cancel the sleep timer' },
  ),
} as const;

type DeviceCommandSchema = (typeof DEVICE_COMMAND_SCHEMAS)[keyof typeof DEVICE_COMMAND_SCHEMAS];
/** A command to a player: one of DEVICE_COMMAND_SCHEMAS, told apart by `command`. */
export type DeviceCommand = Static<DeviceCommandSchema>;
export type DeviceCommandName = DeviceCommand['command'];
/** The command named `N`, with its own fields. */
export type DeviceCommandOf<N extends DeviceCommandName> = Extract<DeviceCommand, { command: N }>;
/** Every command's name. */
export const DEVICE_COMMANDS = Object.keys(DEVICE_COMMAND_SCHEMAS) as DeviceCommandName[];

/** The union as one schema (component `DeviceCommand`), told apart by `command`. */
export const DeviceCommand = TaggedUnion<DeviceCommand>({
  id: 'DeviceCommand',
  description: 'a command to a player: `command` names it, and says which of the other fields it takes',
  tag: 'command',
  names: DEVICE_COMMANDS,
  members: Object.values(DEVICE_COMMAND_SCHEMAS),
});
/** `DeviceCommand` by reference (it is a shared schema), for bodies and events that carry one. */
export const DeviceCommandRef = Type.Unsafe<DeviceCommand>(Type.Ref('DeviceCommand'));

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
