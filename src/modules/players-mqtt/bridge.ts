import type { Aedes } from 'aedes';
import { AppError } from '../../shared/errors.js';
import { ONLINE_WINDOW_MS } from '../devices/rules.js';
import type { DeviceStatus, StatusReport } from '../devices/schemas.js';
import { PLAYER_EVENTS, type DeviceService } from '../devices/service.js';
import type { EventData } from '../events/catalogue.js';
import type { EventHub, LoggedEvent } from '../events/hub.js';
import { revocationOf, shutsOut } from '../events/revocations.js';
import { actionOf, responseKey, topicOfCommand } from './commands.js';
import { eventsMessage, presenceMessage, responseMessage, statusFullMessage, statusMessage } from './payloads.js';
import { DATA, deviceTopic, parseDeviceTopic, type Grant } from './topics.js';

/**
 * Between the broker and the rest of the service. What the family's players report reaches
 * their data topics from the live events' log (so a report made through any instance, REST or
 * MQTT, is published by every instance whose clients follow that family); what an app publishes
 * goes through the devices service, as the same REST call would (commands reach a browser player
 * through its event stream, on whatever instance it is connected to).
 */

export interface Bridge {
  /** A connection of the family opens: its players (ids), now followed; their presence retained. */
  join(familyId: string, userId: string): Promise<ReadonlySet<string>>;
  /** A connection of the family closed (each `join` is matched by one `leave`). */
  leave(familyId: string): void;
  isFamilyDevice(familyId: string, deviceId: string): boolean;
  /** A client's publish, as topics.ts let it through (without the inbox prefix). */
  fromClient(grant: Grant, topic: string, payload: Buffer): void;
  close(): Promise<void>;
}

interface FamilyFollowed {
  devices: Set<string>;
  connections: number;
}

export function createBridge(
  broker: Aedes,
  deps: {
    devices: DeviceService;
    hub: EventHub;
    log: { warn(obj: object, msg: string): void };
    /** Closes the connections whose grant `shutOut` says lost its rights. */
    closeWhere: (shutOut: (grant: Grant) => boolean, why: string) => void;
  },
): Bridge {
  const { devices, hub, log } = deps;
  const families = new Map<string, FamilyFollowed>();
  /** The players followed, by id: their family, and when their presence turns offline. */
  const presence = new Map<string, { familyId: string; online: boolean; stale: NodeJS.Timeout | undefined }>();
  let unfollow: Promise<() => void> | undefined;

  /**
   * The bridge's publishes go out one after another: Aedes stores a retained message before it
   * sends it, and drops a message that reaches a client after a later one (it dedupes by the
   * broker's counter), so a presence followed at once by a status would be lost.
   */
  let queue = Promise.resolve();
  function publish(topic: string, message: object | null, retain = false): void {
    const payload = message === null ? Buffer.alloc(0) : Buffer.from(JSON.stringify(message));
    queue = queue.then(
      () =>
        new Promise<void>((resolve) => {
          broker.publish({ cmd: 'publish', topic, payload, qos: 1, retain, dup: false }, (err) => {
            if (err) log.warn({ err, topic }, 'mqtt: a publish failed');
            resolve();
          });
        }),
    );
  }

  function setPresence(deviceId: string, familyId: string, status: Pick<DeviceStatus, 'isOnline' | 'reportedAt'>): void {
    const known = presence.get(deviceId);
    clearTimeout(known?.stale);
    const online = status.isOnline;
    const entry = { familyId, online, stale: undefined as NodeJS.Timeout | undefined };
    if (online && status.reportedAt !== null) {
      // Offline once the last report is older than the devices' online window (rules.ts).
      const left = Date.parse(status.reportedAt) + ONLINE_WINDOW_MS - Date.now();
      entry.stale = setTimeout(() => setPresence(deviceId, familyId, { isOnline: false, reportedAt: null }), Math.max(0, left) + 50);
      entry.stale.unref();
    }
    presence.set(deviceId, entry);
    if (known?.online !== online) publish(deviceTopic(deviceId, DATA.presence), presenceMessage(online, Date.now()), true);
  }

  function publishStatus(deviceId: string, status: DeviceStatus): void {
    const events = eventsMessage(status);
    const state = statusMessage(status);
    publish(deviceTopic(deviceId, DATA.events), events);
    publish(deviceTopic(deviceId, DATA.legacyEvents), events);
    publish(deviceTopic(deviceId, DATA.status), state);
    publish(deviceTopic(deviceId, DATA.legacyStatus), state);
  }

  function forgetDevice(deviceId: string): void {
    clearTimeout(presence.get(deviceId)?.stale);
    presence.delete(deviceId);
    // An empty retained message clears what was retained.
    publish(deviceTopic(deviceId, DATA.presence), null, true);
  }

  function onEvent(event: LoggedEvent): void {
    const revocation = revocationOf(event);
    if (revocation) deps.closeWhere((grant) => shutsOut(revocation, grant.principal, grant.familyId), revocation.why);
    if (event.familyId === null || !event.kind.startsWith('player.')) return;
    const family = families.get(event.familyId);
    if (!family) return;
    // The log holds what `publish` wrote: the catalogue's data of its kind.
    const data = JSON.parse(event.data) as EventData;
    switch (data.kind) {
      case PLAYER_EVENTS.status:
        setPresence(data.ids.deviceId, event.familyId, data.status);
        publishStatus(data.ids.deviceId, data.status);
        break;
      case PLAYER_EVENTS.added:
        family.devices.add(data.ids.deviceId);
        setPresence(data.ids.deviceId, event.familyId, { isOnline: false, reportedAt: null });
        break;
      case PLAYER_EVENTS.removed:
        family.devices.delete(data.ids.deviceId);
        forgetDevice(data.ids.deviceId);
        break;
      case PLAYER_EVENTS.command: {
        // A player connected over MQTT obeys it on its command topic.
        const mapped = topicOfCommand(data.command);
        if (mapped) publish(deviceTopic(data.ids.deviceId, `command/${mapped.command}`), mapped.payload);
        break;
      }
      default:
        break;
    }
  }

  /** A member's command: done as the REST command is, its outcome on `response`. */
  async function command(grant: Grant, deviceId: string, name: string, payload: Buffer): Promise<void> {
    const { userId } = grant.principal;
    const key = responseKey(name);
    const respond = (refusal?: { code: string; message: string }): void =>
      publish(deviceTopic(deviceId, DATA.response), responseMessage(key, payload.toString('utf8'), refusal));
    const action = actionOf(name, payload);
    try {
      if (action.do === 'refuse') {
        respond({ code: 'bad-request', message: action.why });
      } else if (action.do === 'command') {
        await devices.command(userId, deviceId, action.command);
        respond();
      } else {
        const status = await devices.status(userId, deviceId);
        if (action.report === 'events') publish(deviceTopic(deviceId, DATA.events), eventsMessage(status));
        else if (action.report === 'status') publish(deviceTopic(deviceId, DATA.status), statusMessage(status));
        else publish(deviceTopic(deviceId, DATA.statusFull), { ...statusFullMessage(status), ...(action.requestId ? { requestId: action.requestId } : {}) });
        respond();
      }
    } catch (err) {
      if (err instanceof AppError) respond({ code: err.code, message: err.message });
      else {
        log.warn({ err, deviceId, command: name }, 'mqtt: a command failed');
        respond({ code: 'internal', message: 'the command could not be done; try again' });
      }
    }
  }

  /** A player's own report on its data topics: stored as `PUT /device-v2/{id}/status` stores it. */
  async function report(grant: Grant, deviceId: string, suffix: string, payload: Buffer): Promise<void> {
    // Presence is the service's to say, from the reports' age (a player's will is not needed).
    if (suffix === DATA.presence) return;
    const body = JSON.parse(payload.toString('utf8')) as Record<string, unknown>;
    const fields = (suffix === DATA.status || suffix === DATA.legacyStatus) && typeof body.status === 'object' && body.status !== null ? (body.status as Record<string, unknown>) : body;
    const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
    const number = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
    const playback = fields.playbackStatus;
    const status: StatusReport = {
      activeCard: text(fields.cardId) ?? text(fields.activeCard) ?? null,
      chapterKey: text(fields.chapterKey) ?? null,
      trackKey: text(fields.trackKey) ?? null,
      position: number(fields.position),
      trackLength: number(fields.trackLength),
      playbackStatus: playback === 'playing' || playback === 'paused' || playback === 'stopped' ? playback : undefined,
      userVolumePercentage: number(fields.userVolume) === undefined ? undefined : Math.min(100, Math.round(number(fields.userVolume)!)),
    };
    await devices.report(grant.principal, deviceId, JSON.parse(JSON.stringify(status)) as StatusReport);
  }

  async function follow(): Promise<void> {
    unfollow ??= hub.follow(onEvent);
    await unfollow;
  }

  return {
    async join(familyId, userId) {
      await follow();
      if (!families.has(familyId)) {
        // Read before the family is kept: a failed read leaves nothing half-known behind.
        const players = await devices.listMine(userId);
        const statuses = await Promise.all(players.map((p) => devices.status(userId, p.deviceId)));
        if (!families.has(familyId)) {
          families.set(familyId, { devices: new Set(statuses.map((s) => s.deviceId)), connections: 0 });
          for (const status of statuses) setPresence(status.deviceId, familyId, status);
        }
      }
      const family = families.get(familyId)!;
      family.connections++;
      return family.devices;
    },

    leave(familyId) {
      const family = families.get(familyId);
      if (!family || --family.connections > 0) return;
      families.delete(familyId);
      for (const id of family.devices) {
        clearTimeout(presence.get(id)?.stale);
        presence.delete(id);
      }
      if (families.size === 0 && unfollow) {
        const pending = unfollow;
        unfollow = undefined;
        void pending.then((stop) => stop());
      }
    },

    isFamilyDevice: (familyId, deviceId) => families.get(familyId)?.devices.has(deviceId) ?? false,

    fromClient(grant, topic, payload) {
      const parsed = parseDeviceTopic(topic);
      if (!parsed) return;
      const done = grant.principal.player
        ? report(grant, parsed.deviceId, parsed.suffix, payload)
        : command(grant, parsed.deviceId, parsed.suffix.slice('command/'.length), payload);
      done.catch((err: unknown) => log.warn({ err, topic }, 'mqtt: a message could not be handled'));
    },

    async close() {
      for (const entry of presence.values()) clearTimeout(entry.stale);
      presence.clear();
      families.clear();
      if (unfollow) (await unfollow)();
      unfollow = undefined;
    },
  };
}
