import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { DEVICE_COMMAND_SCHEMAS, type DeviceCommand } from '../devices/schemas.js';

/**
 * The command topics of the public MQTT interface (yoto.dev, "MQTT Documentation"), as what the
 * service does with each: a player command (the same `DeviceCommand` a REST command sends), a
 * report the service answers itself from the player's last status (the player reports each
 * change, so the stored status is the player's own), or a refusal for what a browser cannot do.
 */

/** A command's own fields (its REST schema's, `command` aside): the one place their limits are. */
const fieldsOf = <N extends keyof typeof DEVICE_COMMAND_SCHEMAS>(name: N) => Type.Omit(DEVICE_COMMAND_SCHEMAS[name], ['command'], { additionalProperties: false });

/** `card/start` names the card by a URI, and takes `card-play`'s other fields. */
const CardStart = Type.Composite(
  [
    Type.Object({ uri: Type.String({ minLength: 1, maxLength: 512, description: 'the card: `https://yoto.io/<cardId>`, or the bare id' }) }),
    Type.Omit(DEVICE_COMMAND_SCHEMAS['card-play'], ['command', 'cardId']),
  ],
  { additionalProperties: false },
);
const VolumeSet = fieldsOf('volume');
const SleepTimerSet = fieldsOf('sleep-timer');
const StatusFullRequest = Type.Object({ requestId: Type.Optional(Type.String({ maxLength: 128 })) });

/** What the service does with a command topic's message. */
export type Action =
  | { do: 'command'; command: DeviceCommand }
  | { do: 'report'; report: 'events' | 'status' | 'status-full'; requestId?: string }
  | { do: 'refuse'; why: string };

/** The key a command's outcome goes under in `response` (`{"status": {"<key>": "OK"|"FAIL"}}`). */
export function responseKey(command: string): string {
  const resource = command.split('/')[0]!;
  return resource === 'sleep-timer' ? 'sleepTimer' : resource;
}

/** The card id of a `card/start` URI: its last path segment (`https://yoto.io/<cardId>`), or the bare id. */
export function cardIdOfUri(uri: string): string | undefined {
  const last = uri.split(/[/#:]/).filter((part) => part !== '').at(-1);
  return last !== undefined && /^[A-Za-z0-9_-]{1,128}$/.test(last) ? last : undefined;
}

/** Parses a payload against its schema: the value, or why not (in words a developer reads). */
function parsed<T extends TSchema>(schema: T, payload: Buffer): Static<T> | string {
  const text = payload.toString('utf8').trim();
  let value: unknown = {};
  if (text !== '') {
    try {
      value = JSON.parse(text);
    } catch {
      return 'the payload is not JSON';
    }
  }
  const error = Value.Errors(schema, value).First();
  return error ? `${error.path || 'the payload'}: ${error.message}` : Value.Decode(schema, value);
}

/** A browser player's commands that have no topic, and the documented topics it cannot obey. */
const NOT_FOR_A_BROWSER: Record<string, string> = {
  reboot: 'a browser player cannot be rebooted',
  'ambients/set': 'a browser player has no ambient light',
};

export function actionOf(command: string, payload: Buffer): Action {
  const refusal = NOT_FOR_A_BROWSER[command];
  if (refusal) return { do: 'refuse', why: refusal };
  switch (command) {
    case 'events/request':
      return { do: 'report', report: 'events' };
    case 'status/request':
      return { do: 'report', report: 'status' };
    case 'status': {
      const body = parsed(StatusFullRequest, payload);
      if (typeof body === 'string') return { do: 'refuse', why: body };
      return { do: 'report', report: 'status-full', ...(body.requestId === undefined ? {} : { requestId: body.requestId }) };
    }
    case 'card/start': {
      const body = parsed(CardStart, payload);
      if (typeof body === 'string') return { do: 'refuse', why: body };
      const cardId = cardIdOfUri(body.uri);
      if (cardId === undefined) return { do: 'refuse', why: `'${body.uri}' names no card (https://yoto.io/<cardId>)` };
      const { chapterKey, trackKey, secondsIn, cutOff, anyButtonStop } = body;
      return { do: 'command', command: { command: 'card-play', cardId, chapterKey, trackKey, secondsIn, cutOff, anyButtonStop } };
    }
    case 'card/stop':
      return { do: 'command', command: { command: 'stop' } };
    case 'card/pause':
      return { do: 'command', command: { command: 'pause' } };
    case 'card/resume':
      return { do: 'command', command: { command: 'resume' } };
    case 'volume/set': {
      const body = parsed(VolumeSet, payload);
      return typeof body === 'string' ? { do: 'refuse', why: body } : { do: 'command', command: { command: 'volume', volume: body.volume } };
    }
    case 'sleep-timer/set': {
      const body = parsed(SleepTimerSet, payload);
      return typeof body === 'string' ? { do: 'refuse', why: body } : { do: 'command', command: { command: 'sleep-timer', seconds: body.seconds } };
    }
    default:
      return { do: 'refuse', why: command.startsWith('bluetooth') ? 'a browser player has no Bluetooth' : `'${command}' is no command a browser player obeys` };
  }
}

/** The other way: the topic and payload a player connected over MQTT receives a command on. */
export function topicOfCommand(command: DeviceCommand): { command: string; payload: object } | undefined {
  switch (command.command) {
    case 'card-play': {
      const { cardId, chapterKey, trackKey, secondsIn, cutOff, anyButtonStop } = command;
      return { command: 'card/start', payload: { uri: `https://yoto.io/${cardId}`, chapterKey, trackKey, secondsIn, cutOff, anyButtonStop } };
    }
    case 'stop':
      return { command: 'card/stop', payload: {} };
    case 'pause':
      return { command: 'card/pause', payload: {} };
    case 'resume':
      return { command: 'card/resume', payload: {} };
    case 'volume':
      return { command: 'volume/set', payload: { volume: command.volume } };
    case 'sleep-timer':
      return { command: 'sleep-timer/set', payload: { seconds: command.seconds } };
    default:
      // play, next, previous, volumeUp, volumeDown: no MQTT topic carries them.
      return undefined;
  }
}
