import type { Principal } from '../../auth/principal.js';
import { SCOPES, grants } from '../../auth/scopes.js';

/**
 * The topics of the players' MQTT interface, as the public service names them (yoto.dev,
 * "MQTT Documentation"): `device/<id>/command/...` from apps to a player, `device/<id>/data/...`,
 * `status/full`, `presence` and `response` from the player to apps, and the older
 * `device/<id>/events` and `device/<id>/status`.
 *
 * Every PUBLISH a client makes goes to the service, not to the other clients: the broker moves it
 * under INBOX (which no client may subscribe to, and which `#` never matches), and the bridge acts
 * on it (a command goes through the devices service and the live events' log, as a REST command
 * does). What clients receive on `device/...` is published by the bridge alone, from the log, so
 * every instance publishes the same things and nothing arrives twice.
 */

export const INBOX = '$cardshelf/inbox/';

/** What a player publishes for apps: each suffix under `device/<id>/`. */
export const DATA = {
  events: 'data/events',
  status: 'data/status',
  statusFull: 'status/full',
  presence: 'presence',
  response: 'response',
  /** The older topics (yoto.dev's "Connecting to players" subscribes to these). */
  legacyEvents: 'events',
  legacyStatus: 'status',
} as const;

export const deviceTopic = (deviceId: string, suffix: string): string => `device/${deviceId}/${suffix}`;

/** `device/<id>/<suffix>`, or undefined for any other topic. */
export function parseDeviceTopic(topic: string): { deviceId: string; suffix: string } | undefined {
  const match = /^device\/([^/]+)\/(.+)$/.exec(topic);
  if (!match) return undefined;
  return { deviceId: match[1]!, suffix: match[2]! };
}

/**
 * The user name of a CONNECT: `<deviceId>?x-amz-customauthorizer-name=...` as the public broker
 * takes it (the query names its authorizer, and is ignored here), `_` for "all of the account's
 * players" (yoto_api), or a bare device id.
 */
export function deviceOfUsername(username: string | undefined): string | undefined {
  if (username === undefined) return undefined;
  const id = username.split('?')[0]!;
  return id === '' || id === '_' ? undefined : id;
}

/** A client's rights, fixed at CONNECT: the token's principal and its family's players then. */
export interface Grant {
  principal: Principal;
  familyId: string;
}

const isWildcard = (level: string): boolean => level === '+' || level === '#';

/**
 * Whether the client may subscribe to `topic`. A member: any topic under one of its family's
 * players (by id: no wildcard in place of the id). A player's own credential: its own command
 * topics alone. `isFamilyDevice` is asked only for a topic of the right form.
 */
export function maySubscribe(grant: Grant, topic: string, isFamilyDevice: (deviceId: string) => boolean): boolean {
  const parsed = parseDeviceTopic(topic);
  if (!parsed || isWildcard(parsed.deviceId)) return false;
  const player = grant.principal.player;
  if (player) return parsed.deviceId === player.deviceId && /^command\/./.test(parsed.suffix);
  return isFamilyDevice(parsed.deviceId);
}

/** What a client's PUBLISH asks of the service, or why it is refused. */
export type Publication =
  | { kind: 'command'; deviceId: string; command: string }
  | { kind: 'report'; deviceId: string; data: string }
  | { refused: string };

/**
 * A member with `family:library:manage` commands its family's players (`device/<id>/command/...`);
 * a player's own credential publishes its own data topics. Wildcards are never published to.
 */
export function publicationOf(grant: Grant, topic: string, isFamilyDevice: (deviceId: string) => boolean): Publication {
  const parsed = parseDeviceTopic(topic);
  if (!parsed || topic.includes('+') || topic.includes('#')) return { refused: `'${topic}' is no topic of a player` };
  const { deviceId, suffix } = parsed;
  const player = grant.principal.player;
  if (player) {
    if (deviceId !== player.deviceId) return { refused: 'a player publishes under its own id alone' };
    const data: string[] = [DATA.events, DATA.status, DATA.presence, DATA.legacyEvents, DATA.legacyStatus];
    return data.includes(suffix) ? { kind: 'report', deviceId, data: suffix } : { refused: `a player publishes its data topics alone, not '${suffix}'` };
  }
  if (!suffix.startsWith('command/')) return { refused: `apps publish commands (device/<id>/command/...), not '${suffix}'` };
  if (!grants(grant.principal.scopes, SCOPES.libraryManage)) return { refused: `commanding a player needs the ${SCOPES.libraryManage} scope` };
  if (!isFamilyDevice(deviceId)) return { refused: `'${deviceId}' is no player of this family` };
  return { kind: 'command', deviceId, command: suffix.slice('command/'.length) };
}
