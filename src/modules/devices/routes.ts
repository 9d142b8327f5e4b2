import { SCOPES } from '../../auth/scopes.js';
import type { App } from '../../http/route-app.js';
import { badRequest } from '../../shared/errors.js';
import { ErrorRef, StatusOk, authErrors } from '../../shared/schemas.js';
import { clientConfigProblem, clientShortcutsProblem, statusRequestProblem } from './rules.js';
import {
  CommandAccepted,
  ConfigUpdate,
  DeviceCommandRef,
  DeviceConfigEnvelope,
  DeviceList,
  DeviceParams,
  PlayerRegistration,
  RegisteredPlayer,
  ShortcutsUpdate,
  StatusReport,
  StatusRequest,
  StatusRequested,
} from './schemas.js';
import type { DeviceService } from './service.js';

const deviceErrors = { ...authErrors, 404: ErrorRef };

/** A hook refusing a body in a client's own shape with what to send instead (rules.ts). */
const refuse = (problemOf: (body: unknown) => string | undefined) => async (req: { body: unknown }) => {
  const problem = problemOf(req.body);
  if (problem) throw badRequest(problem);
};

/**
 * The family's players, in the public service's paths and shapes. Members read them with
 * `family:library:view` and change or command them with `family:library:manage` (the scopes a
 * signed-in member's token carries); a player reports its own status with `device:player`.
 */
export async function deviceRoutes(app: App, opts: { devices: DeviceService }): Promise<void> {
  registryRoutes(app, opts.devices);
  statusRoutes(app, opts.devices);
  settingsRoutes(app, opts.devices);
  commandRoutes(app, opts.devices);
}

/** The family's devices listed, a player registered, a device removed. */
function registryRoutes(app: App, devices: DeviceService): void {
  app.get('/device-v2/devices/mine', {
    config: { auth: SCOPES.libraryView },
    schema: {
      tags: ['devices'],
      summary: "The devices of the caller's family",
      response: { 200: DeviceList, ...authErrors },
    },
    handler: async (req) => ({ devices: await devices.listMine(req.principal.userId) }),
  });

  app.post('/device-v2/devices/mine', {
    config: { auth: SCOPES.libraryManage },
    schema: {
      tags: ['devices'],
      summary: 'Register a player (a browser) in the caller\'s family',
      description:
        "Answers the new device and its credential: a token for the player alone (`family:library:view device:player`), shown once. Removing the device revokes it at once, and ends its event streams. A family has at most `PLAYERS_MAX_PER_FAMILY` (20) players: one more is 400 `device-limit`.",
      body: PlayerRegistration,
      response: { 201: RegisteredPlayer, ...authErrors },
    },
    handler: async (req, reply) => reply.code(201).send(await devices.register(req.principal.userId, req.body.name)),
  });

  app.delete('/device-v2/:deviceId', {
    config: { auth: SCOPES.libraryManage },
    schema: {
      tags: ['devices'],
      summary: "Remove a device from the family (a player's credential stops working at once)",
      params: DeviceParams,
      response: { 200: StatusOk, ...deviceErrors },
    },
    handler: async (req) => {
      await devices.remove(req.principal.userId, req.params.deviceId);
      return { status: 'ok' as const };
    },
  });
}

/** The status a player reports, and reads of it. */
function statusRoutes(app: App, devices: DeviceService): void {
  app.get('/device-v2/:deviceId/status', {
    config: { auth: SCOPES.libraryView },
    schema: {
      tags: ['devices'],
      summary: 'The last status the player reported',
      description: '`isOnline` is true while the last report is at most 30 seconds old.',
      params: DeviceParams,
      response: { 200: { $ref: 'DeviceStatus' }, ...deviceErrors },
    },
    handler: async (req) => devices.status(req.principal.userId, req.params.deviceId),
  });

  app.put('/device-v2/:deviceId/status', {
    config: { auth: SCOPES.player },
    schema: {
      tags: ['devices'],
      summary: "A player reports its status (its own credential only)",
      description: 'The whole state each time: fields left out take their defaults.',
      params: DeviceParams,
      body: StatusReport,
      response: { 200: { $ref: 'DeviceStatus' }, ...deviceErrors },
    },
    handler: async (req) => devices.report(req.principal, req.params.deviceId, req.body),
  });
}

/** A device's settings and shortcuts, read and changed. */
function settingsRoutes(app: App, devices: DeviceService): void {
  app.get('/device-v2/:deviceId/config', {
    config: { auth: SCOPES.libraryView },
    schema: {
      tags: ['devices'],
      summary: "The device's settings (defaults for those never written) and shortcuts",
      params: DeviceParams,
      response: { 200: DeviceConfigEnvelope, ...deviceErrors },
    },
    handler: async (req) => devices.config(req.principal.userId, req.params.deviceId),
  });

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/device-v2/:deviceId/config',
      config: { auth: SCOPES.libraryManage },
      schema: {
        tags: ['devices'],
        summary: "Change the device's name or settings; settings left out keep their values",
        params: DeviceParams,
        body: ConfigUpdate,
        response: { 200: StatusOk, ...deviceErrors },
      },
      preValidation: refuse(clientConfigProblem),
      handler: async (req) => {
        await devices.updateConfig(req.principal.userId, req.params.deviceId, req.body);
        return { status: 'ok' as const };
      },
    });
  }

  app.put('/device-v2/:deviceId/shortcuts', {
    config: { auth: SCOPES.libraryManage },
    schema: {
      tags: ['devices'],
      summary: "Replace the device's shortcuts (day and night modes)",
      params: DeviceParams,
      body: ShortcutsUpdate,
      response: { 200: StatusOk, ...deviceErrors },
    },
    preValidation: refuse(clientShortcutsProblem),
    handler: async (req) => {
      await devices.updateShortcuts(req.principal.userId, req.params.deviceId, req.body.shortcuts);
      return { status: 'ok' as const };
    },
  });
}

/** Commands to a player, the request for its status among them. */
function commandRoutes(app: App, devices: DeviceService): void {
  app.post('/device-v2/:deviceId/command', {
    config: { auth: SCOPES.libraryManage },
    schema: {
      tags: ['devices'],
      summary: 'Send a command to a player: play a card (at a chapter and track), pause, resume, stop, volume, next, previous, a sleep timer',
      description: 'An offline player is refused with 409 `device-offline`: commands are never queued.',
      params: DeviceParams,
      body: DeviceCommandRef,
      response: { 200: CommandAccepted, ...deviceErrors, 409: ErrorRef },
    },
    handler: async (req) => {
      const { commandId } = await devices.command(req.principal.userId, req.params.deviceId, req.body);
      return { status: 'ok' as const, commandId };
    },
  });

  app.post('/device-v2/:deviceId/command/status', {
    config: { auth: SCOPES.libraryView },
    schema: {
      tags: ['devices'],
      summary: "Ask for the player's status (answered from its last report)",
      description:
        "The body is empty or `{}`. Answers the last status the player reported, as `GET .../status` does; while the player is online it is also published again on the family's live events as `player.status` (and so on MQTT's `data/status`). An offline player's stored status is answered (`isOnline` false) and nothing is published.",
      params: DeviceParams,
      body: StatusRequest,
      response: { 200: StatusRequested, ...deviceErrors },
    },
    preValidation: async (req) => {
      // A request for status has nothing to say: a POST without a body is one too.
      req.body ??= {};
      await refuse(statusRequestProblem)(req);
    },
    handler: async (req) => ({ status: 'ok' as const, deviceStatus: await devices.requestStatus(req.principal.userId, req.params.deviceId) }),
  });
}
