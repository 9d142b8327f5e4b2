import type { PlayerCredentialIssuer } from '../../auth/player-credential.js';
import type { Principal } from '../../auth/principal.js';
import { bumpCounters, scopes } from '../../db/change-counters.js';
import type { Store } from '../../db/dialect.js';
import { familyLock, inUnitOfWork, type Trx } from '../../db/unit-of-work.js';
import type { DeviceRow } from '../../db/database.js';
import { publish } from '../events/publish.js';
import { PLAYER_REMOVED } from '../events/revocations.js';
import { now } from '../../shared/clock.js';
import { AppError, badRequest, notFound } from '../../shared/errors.js';
import { newHexId } from '../../shared/ids.js';
import type { FamilyService } from '../families/service.js';
import { newPlayerId, playerMac } from './identity.js';
import * as repo from './repository.js';
import {
  BROWSER_PLAYER,
  EMPTY_SHORTCUTS,
  checkPlayerLimit,
  configOf,
  deviceView,
  isBrowserPlayer,
  isOnline,
  normalReport,
  reportProblem,
  reportedTimezone,
  rawStatusView,
  softwareVersionOf,
  statusView,
} from './rules.js';
import type { ConfigUpdate, Device, DeviceCommand, DeviceStatus, Shortcuts, StatusReport } from './schemas.js';

export interface DeviceServiceDeps {
  families: FamilyService;
  /** Issues a player's credential; null when the instance cannot (an external issuer signs tokens). */
  issueCredential: PlayerCredentialIssuer;
  /** Throws the card's 404 unless `userId` may read it (a card to play must be one the family may play). */
  assertReadable: (userId: string, cardId: string) => Promise<void>;
  /** Players a family may register (PLAYERS_MAX_PER_FAMILY). */
  maxPlayersPerFamily: number;
}

export interface DeviceService {
  listMine(userId: string): Promise<Device[]>;
  status(userId: string, deviceId: string): Promise<DeviceStatus>;
  /**
   * A request for the player's status (`POST .../command/status`, MQTT `command/status/request`),
   * answered from its last report: published again as `player.status` while the player is
   * online; an offline player's stored status is answered, and nothing is published.
   */
  requestStatus(userId: string, deviceId: string): Promise<DeviceStatus>;
  config(userId: string, deviceId: string): Promise<DeviceConfigAnswer>;
  updateConfig(userId: string, deviceId: string, update: ConfigUpdate): Promise<void>;
  updateShortcuts(userId: string, deviceId: string, shortcuts: Shortcuts): Promise<void>;
  /** Refused (409 `device-offline`) when the player has not reported lately: never queued. */
  command(userId: string, deviceId: string, command: DeviceCommand): Promise<{ commandId: string }>;
  /** Refused (400 `device-limit`) when the family has as many players as it may. */
  register(userId: string, name: string): Promise<{ device: Device; credential: { accessToken: string; tokenType: 'Bearer'; expiresAt: string; scope: string } }>;
  remove(userId: string, deviceId: string): Promise<void>;
  /** A player's own report of its status. */
  report(principal: Principal, deviceId: string, report: StatusReport): Promise<DeviceStatus>;
  /**
   * A player is there (`here`: its MQTT connection is open, and again at each check while it
   * stays) or gone (its last event stream or MQTT connection closed): online or offline from
   * now, not 30 seconds after its last report (DECISIONS.md, "Players over MQTT").
   */
  presence(principal: Principal, here: boolean): Promise<void>;
}

/** The live events of players (`GET /user/family/events`), all seen by the family. */
export const PLAYER_EVENTS = {
  /** A command for the player `ids.deviceId`; `command` as sent to `POST /device-v2/{id}/command`. */
  command: 'player.command',
  /** The player `ids.deviceId` reported its status; `status` as `GET /device-v2/{id}/status` answers. */
  status: 'player.status',
  added: 'player.added',
  /** Also ends the player's event streams, on every instance (events/revocations.ts). */
  removed: PLAYER_REMOVED,
} as const;

const DEVICES_READ = '/device-v2/devices/mine';

export type DeviceConfigAnswer = ReturnType<typeof configAnswer>;

export function createDeviceService(store: Store, deps: DeviceServiceDeps): DeviceService {
  const { db } = store;
  const { families } = deps;

  /** The player's status on the family's stream: the family's apps (and MQTT's `data/status`) show it live. */
  function publishStatus(trx: Trx, row: DeviceRow, view: DeviceStatus): Promise<void> {
    return publish(trx, store.dialect, {
      kind: PLAYER_EVENTS.status,
      audience: { familyId: row.family_id },
      ids: { deviceId: row.device_id },
      read: `/device-v2/${row.device_id}/status`,
      status: view,
    });
  }

  /** The caller's family's device; another family's, or none, is a 404 alike. */
  async function familyDevice(userId: string, deviceId: string) {
    const familyId = await families.findFamilyId(userId);
    const row = familyId === undefined ? undefined : await repo.findFamilyDevice(db, familyId, deviceId);
    if (!row) throw notFound('device');
    return row;
  }

  return {
    async listMine(userId) {
      const familyId = await families.findFamilyId(userId);
      if (familyId === undefined) return [];
      const at = Date.now();
      return (await repo.listFamilyDevices(db, familyId)).map((row) => deviceView(row, at));
    },

    async status(userId, deviceId) {
      return statusView(await familyDevice(userId, deviceId), Date.now());
    },

    async requestStatus(userId, deviceId) {
      const row = await familyDevice(userId, deviceId);
      const view = statusView(row, Date.now());
      // A player that is there would push its status; one that is not pushes nothing.
      if (view.isOnline) await inUnitOfWork(store, [], (trx) => publishStatus(trx, row, view));
      return view;
    },

    async config(userId, deviceId) {
      return configAnswer(await familyDevice(userId, deviceId), Date.now());
    },

    async updateConfig(userId, deviceId, update) {
      if (update.deviceId !== undefined && update.deviceId !== deviceId) {
        throw badRequest(`the body names device '${update.deviceId}', the path '${deviceId}'`);
      }
      const row = await familyDevice(userId, deviceId);
      // A read-modify-write of one small document; the last of two racing writes wins whole.
      await repo.updateDevice(db, row.device_id, {
        ...(update.name !== undefined ? { name: update.name } : {}),
        ...(update.config !== undefined ? { config: JSON.stringify(configOf(row.config, update.config)) } : {}),
      });
    },

    async updateShortcuts(userId, deviceId, shortcuts) {
      const row = await familyDevice(userId, deviceId);
      await repo.updateDevice(db, row.device_id, { shortcuts: JSON.stringify({ ...shortcuts, versionId: newHexId() }) });
    },

    async command(userId, deviceId, command) {
      const row = await familyDevice(userId, deviceId);
      if (!isOnline(row.status_at, Date.now())) {
        throw new AppError('device-offline', `the player '${row.name ?? row.device_id}' is offline (no status for 30 seconds); the command was not sent`);
      }
      if (command.command === 'card-play') await deps.assertReadable(userId, command.cardId);
      const commandId = newHexId();
      // Delivered on the family's event stream: the player named by `ids.deviceId` obeys it;
      // members see it too (another app may show "sent to Kitchen").
      await inUnitOfWork(store, [], (trx) =>
        publish(trx, store.dialect, {
          kind: PLAYER_EVENTS.command,
          audience: { familyId: row.family_id },
          ids: { deviceId: row.device_id, commandId },
          command,
          sentBy: userId,
        }),
      );
      return { commandId };
    },

    async register(userId, name) {
      if (!deps.issueCredential) {
        throw new AppError('forbidden', "this instance's tokens come from an external issuer: it cannot issue a player's credential");
      }
      const familyId = await families.ensureFamilyId(userId);
      const deviceId = newPlayerId();
      const credential = await deps.issueCredential(deviceId, userId);
      const at = now();
      await inUnitOfWork(store, [familyLock(familyId)], async (trx) => {
        checkPlayerLimit(await repo.countPlayers(trx, familyId, BROWSER_PLAYER), deps.maxPlayersPerFamily);
        await repo.insertPlayer(trx, {
          device_id: deviceId,
          family_id: familyId,
          added_at: at,
          position: await repo.nextPosition(trx, familyId),
          name,
          device_type: BROWSER_PLAYER,
          credential_id: credential.credentialId,
          registered_by: userId,
        });
        await families.recordEvent(trx, familyId, 'device-added', at, { deviceId, name });
        await bumpCounters(trx, [scopes.family(familyId)]);
        await publish(trx, store.dialect, { kind: PLAYER_EVENTS.added, audience: { familyId }, ids: { deviceId }, read: DEVICES_READ });
      });
      const row = await repo.findFamilyDevice(db, familyId, deviceId);
      if (!row) throw new Error(`player ${deviceId} vanished after it was registered`);
      const { accessToken, expiresAt, scope } = credential;
      return { device: deviceView(row, Date.now()), credential: { accessToken, tokenType: 'Bearer' as const, expiresAt, scope } };
    },

    async remove(userId, deviceId) {
      const row = await familyDevice(userId, deviceId);
      await inUnitOfWork(store, [familyLock(row.family_id)], async (trx) => {
        await repo.deleteDevice(trx, row.device_id);
        await families.recordEvent(trx, row.family_id, 'device-removed', now(), { deviceId: row.device_id });
        await bumpCounters(trx, [scopes.family(row.family_id)]);
        await publish(trx, store.dialect, { kind: PLAYER_EVENTS.removed, audience: { familyId: row.family_id }, ids: { deviceId: row.device_id }, read: DEVICES_READ });
      });
    },

    async presence(principal, here) {
      const deviceId = principal.player?.deviceId;
      if (deviceId === undefined) return;
      const familyId = await deps.families.findFamilyId(principal.userId);
      const row = familyId === undefined ? undefined : await repo.findFamilyDevice(db, familyId, deviceId);
      if (!row || (!here && row.status_at === null)) return;
      const changed = { ...row, status_at: here ? now() : null };
      await inUnitOfWork(store, [], async (trx) => {
        await repo.updateDevice(trx, row.device_id, { status_at: changed.status_at });
        await publishStatus(trx, changed, statusView(changed, Date.now()));
      });
    },

    async report(principal, deviceId, report) {
      // Only the player itself reports its status; members see it, and send commands instead.
      if (principal.player?.deviceId !== deviceId) throw new AppError('forbidden', 'a player reports only its own status');
      const problem = reportProblem(report);
      if (problem) throw badRequest(problem);
      const row = await familyDevice(principal.userId, deviceId);
      const reported = { ...row, status: JSON.stringify(normalReport(report)), status_at: now() };
      const view = statusView(reported, Date.parse(reported.status_at));
      await inUnitOfWork(store, [], async (trx) => {
        await repo.updateDevice(trx, row.device_id, { status: reported.status, status_at: reported.status_at });
        await publishStatus(trx, row, view);
      });
      return view;
    },
  };
}

/** `GET /device-v2/{id}/config`: the device, its settings with their defaults, its shortcuts. */
function configAnswer(row: Parameters<typeof statusView>[0], nowMs: number) {
  const view = deviceView(row, nowMs);
  const software = softwareVersionOf(row);
  return {
    device: {
      deviceId: view.deviceId,
      name: view.name,
      deviceType: view.deviceType,
      deviceFamily: view.deviceFamily,
      deviceGroup: view.deviceGroup,
      errorCode: null,
      geoTimezone: reportedTimezone(row),
      getPosix: '',
      mac: isBrowserPlayer(row) ? playerMac(view.deviceId) : '',
      online: view.online,
      registrationCode: '',
      activationPopCode: '',
      popCode: '',
      releaseChannelId: view.releaseChannel,
      releaseChannelVersion: software,
      fwVersion: software,
      status: rawStatusView(statusView(row, nowMs)),
      config: configOf(row.config),
      shortcuts: row.shortcuts === null ? EMPTY_SHORTCUTS : (JSON.parse(row.shortcuts) as Shortcuts),
    },
  };
}
