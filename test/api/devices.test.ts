import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_USER_SCOPES, errorCode, startTestApp, type Reply, type TestApp } from '../support/test-app.js';
import { ISO_MS, controlledClock, createCard, expectStatus, familyOf, newUser, putCatalogueCard } from '../support/fixtures.js';
import { testDialect } from '../support/test-database.js';

/**
 * The family's players (issue 22) through HTTP: the devices routes in the public shapes (the
 * public clients' device types), registering a browser as a player, its credential and its
 * revocation, status, config, shortcuts and commands.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

interface Player {
  deviceId: string;
  token: string;
}

async function member(): Promise<{ userId: string; token: string }> {
  const userId = newUser('parent');
  await familyOf(t, [userId]);
  return { userId, token: await t.token(userId, ALL_USER_SCOPES) };
}

async function register(memberToken: string, name = 'Kitchen'): Promise<Player> {
  const r = expectStatus(await t.call('POST', '/device-v2/devices/mine', { token: memberToken, body: { name } }), 201);
  return { deviceId: r.body.device.deviceId, token: r.body.credential.accessToken };
}

async function report(player: Player, body: Record<string, unknown> = {}): Promise<Reply> {
  return t.call('PUT', `/device-v2/${player.deviceId}/status`, { token: player.token, body });
}

/** The field types of the public clients' `Device` (yoto-js types, yoto-nodejs-client typedefs). */
const DEVICE_FIELDS = {
  deviceId: 'string',
  name: 'string',
  description: 'string',
  online: 'boolean',
  releaseChannel: 'string',
  deviceType: 'string',
  deviceFamily: 'string',
  deviceGroup: 'string',
};

/** A sample of the clients' `DeviceStatus` fields and their types. */
const STATUS_FIELDS = {
  deviceId: 'string',
  activeCard: 'string',
  batteryLevelPercentage: 'number',
  cardInsertionState: 'number',
  dayMode: 'number',
  firmwareVersion: 'string',
  isCharging: 'boolean',
  isOnline: 'boolean',
  networkSsid: 'string',
  nightlightMode: 'string',
  powerSource: 'number',
  systemVolumePercentage: 'number',
  updatedAt: 'string',
  userVolumePercentage: 'number',
  utcTime: 'number',
  wifiStrength: 'number',
};

function typesOf(object: Record<string, unknown>, fields: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(fields).map((k) => [k, typeof object[k]]));
}

describe(`devices on ${testDialect()}`, () => {
  describe('GET /device-v2/devices/mine', () => {
    it("lists no device for a user whose family has none", async () => {
      const { token } = await member();
      const r = expectStatus(await t.call('GET', '/device-v2/devices/mine', { token }), 200);
      expect(r.body).toEqual({ devices: [] });
    });

    it('lists a registered player in the public shape, and GET /user/family lists it too', async () => {
      const { token } = await member();
      const kitchen = await register(token, 'Kitchen');
      const r = expectStatus(await t.call('GET', '/device-v2/devices/mine', { token }), 200);
      expect(r.body.devices).toHaveLength(1);
      const [device] = r.body.devices;
      expect(typesOf(device, DEVICE_FIELDS)).toEqual(DEVICE_FIELDS);
      expect(device).toMatchObject({ deviceId: kitchen.deviceId, name: 'Kitchen', online: false, deviceType: 'cardshelf-browser' });
      const family = expectStatus(await t.call('GET', '/user/family', { token }), 200);
      expect(family.body.family.devices.map((d: { deviceId: string }) => d.deviceId)).toEqual([kitchen.deviceId]);
      expect(family.body.family.devices[0].addedAt).toMatch(ISO_MS);
    });

    it('presents a player in the forms the public clients check: a "y" id, a feature family, an address and a software version', async () => {
      const { token } = await member();
      const kitchen = await register(token, 'Kitchen');
      const hall = await register(token, 'Hall');
      expect(kitchen.deviceId).toMatch(/^y[0-9a-f]{24}$/);
      const [device] = expectStatus(await t.call('GET', '/device-v2/devices/mine', { token }), 200).body.devices;
      // A browser has a mini's features (no nightlight, no light sensor) and no hardware generation or form factor.
      expect(device.deviceFamily).toBe('mini');
      expect(device).not.toHaveProperty('generation');
      expect(device).not.toHaveProperty('formFactor');
      const config = async (id: string) => expectStatus(await t.call('GET', `/device-v2/${id}/config`, { token }), 200).body.device;
      const first = await config(kitchen.deviceId);
      // Locally administered, unicast: the first byte's two low bits are 10.
      expect(first.mac).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
      expect(parseInt(first.mac.slice(0, 2), 16) & 0b11).toBe(0b10);
      expect((await config(kitchen.deviceId)).mac).toBe(first.mac);
      expect((await config(hall.deviceId)).mac).not.toBe(first.mac);
      const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
      expect([first.releaseChannelVersion, first.fwVersion, first.status.fwVersion]).toEqual([version, version, version]);
      const status = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/status`, { token }), 200).body;
      expect(status.firmwareVersion).toBe(version);
    });

    it('lists a device an operator listed by id alone, with the defaults', async () => {
      const userId = newUser('listed');
      await familyOf(t, [userId], ['hardware-1']);
      const r = expectStatus(await t.call('GET', '/device-v2/devices/mine', { token: await t.token(userId) }), 200);
      expect(r.body.devices).toEqual([
        expect.objectContaining({ deviceId: 'hardware-1', name: 'hardware-1', online: false, deviceType: 'cardshelf-device' }),
      ]);
      const status = expectStatus(await t.call('GET', '/device-v2/hardware-1/status', { token: await t.token(userId) }), 200);
      expect(status.body).toMatchObject({ deviceId: 'hardware-1', isOnline: false, activeCard: 'none' });
      // No hardware known: no address, no software version, no feature family.
      const config = expectStatus(await t.call('GET', '/device-v2/hardware-1/config', { token: await t.token(userId) }), 200).body.device;
      expect([config.mac, config.fwVersion, config.releaseChannelVersion, config.deviceFamily]).toEqual(['', '', '', 'unknown']);
    });

    it('asks for a token (401) and for family:library:view (403)', async () => {
      const none = await t.call('GET', '/device-v2/devices/mine');
      expect([none.status, errorCode(none)]).toEqual([401, 'unauthorized']);
      const bare = await t.call('GET', '/device-v2/devices/mine', { token: await t.token(newUser(), 'user:content:view') });
      expect([bare.status, errorCode(bare)]).toEqual([403, 'forbidden']);
    });
  });

  describe('another family', () => {
    it("answers 404 for every route on another family's device, and lists it nowhere else", async () => {
      const owner = await member();
      const kitchen = await register(owner.token);
      expectStatus(await report(kitchen, { playbackStatus: 'stopped' }), 200);
      const other = await member();
      const calls: [string, string, unknown?][] = [
        ['GET', `/device-v2/${kitchen.deviceId}/status`],
        ['GET', `/device-v2/${kitchen.deviceId}/config`],
        ['PUT', `/device-v2/${kitchen.deviceId}/config`, { name: 'Mine now' }],
        ['PATCH', `/device-v2/${kitchen.deviceId}/config`, { config: { repeatAll: true } }],
        ['PUT', `/device-v2/${kitchen.deviceId}/shortcuts`, { shortcuts: { modes: { day: { content: [] }, night: { content: [] } } } }],
        ['POST', `/device-v2/${kitchen.deviceId}/command`, { command: 'pause' }],
        ['DELETE', `/device-v2/${kitchen.deviceId}`],
      ];
      for (const [method, url, body] of calls) {
        const r = await t.call(method, url, { token: other.token, body });
        expect([method, url, r.status, errorCode(r)]).toEqual([method, url, 404, 'not-found']);
      }
      const mine = expectStatus(await t.call('GET', '/device-v2/devices/mine', { token: other.token }), 200);
      expect(mine.body.devices).toEqual([]);
      // Nothing changed for its own family.
      const config = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/config`, { token: owner.token }), 200);
      expect(config.body.device.name).toBe('Kitchen');
      expect(config.body.device.config.repeatAll).toBe(false);
    });

    it('answers 404 for a device that does not exist', async () => {
      const { token } = await member();
      const r = await t.call('GET', '/device-v2/invalid-device-id-12345/status', { token });
      expect([r.status, errorCode(r)]).toEqual([404, 'not-found']);
    });
  });

  describe('status', () => {
    it('is offline with no card before any report; a report makes it online with what it plays', async () => {
      const { token } = await member();
      const kitchen = await register(token);
      const before = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/status`, { token }), 200);
      expect(typesOf(before.body, STATUS_FIELDS)).toEqual(STATUS_FIELDS);
      expect(before.body).toMatchObject({ deviceId: kitchen.deviceId, isOnline: false, activeCard: 'none', cardInsertionState: 0, reportedAt: null });

      const sent = { activeCard: 'abcde', chapterKey: '02', trackKey: '01', position: 12.5, trackLength: 60, playbackStatus: 'playing', userVolumePercentage: 40 };
      const answered = expectStatus(await report(kitchen, sent), 200);
      expect(answered.body).toMatchObject({ ...sent, isOnline: true });
      const after = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/status`, { token }), 200);
      expect(after.body).toMatchObject({ ...sent, deviceId: kitchen.deviceId, isOnline: true, cardInsertionState: 2 });
      expect(after.body.updatedAt).toMatch(ISO_MS);
      expect(after.body.reportedAt).toBe(after.body.updatedAt);
      const listed = expectStatus(await t.call('GET', '/device-v2/devices/mine', { token }), 200);
      expect(listed.body.devices[0].online).toBe(true);
    });

    it("reports its time zone, which the config answers as geoTimezone (null before); a name that is not a zone is a 400, nothing stored", async () => {
      const { token } = await member();
      const kitchen = await register(token);
      const config = async () => expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/config`, { token }), 200).body.device;
      expect((await config()).geoTimezone).toBeNull();
      expectStatus(await report(kitchen, { timezone: 'Europe/London', userVolumePercentage: 30 }), 200);
      expect((await config()).geoTimezone).toBe('Europe/London');
      for (const timezone of ['Mars/Olympus_Mons', '', 'x'.repeat(65), 5]) {
        const r = await report(kitchen, { timezone, userVolumePercentage: 90 });
        expect([r.status, errorCode(r)], String(timezone)).toEqual([400, 'bad-request']);
      }
      expect((await config()).geoTimezone).toBe('Europe/London');
      const status = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/status`, { token }), 200).body;
      expect(status.userVolumePercentage).toBe(30);
    });

    it('goes offline 30 seconds after the last report', async () => {
      const clock = controlledClock();
      const { token } = await member();
      const kitchen = await register(token);
      expectStatus(await report(kitchen), 200);
      clock.tick(30_000);
      expect((await t.call('GET', `/device-v2/${kitchen.deviceId}/status`, { token })).body.isOnline).toBe(true);
      clock.tick(1);
      expect((await t.call('GET', `/device-v2/${kitchen.deviceId}/status`, { token })).body.isOnline).toBe(false);
      const r = await t.call('POST', `/device-v2/${kitchen.deviceId}/command`, { token, body: { command: 'pause' } });
      expect([r.status, errorCode(r)]).toEqual([409, 'device-offline']);
    });

    it("is reported only by the player itself: a member's token (403), another player of the family (403)", async () => {
      const { token } = await member();
      const kitchen = await register(token, 'Kitchen');
      const hall = await register(token, 'Hall');
      const byMember = await t.call('PUT', `/device-v2/${kitchen.deviceId}/status`, { token, body: {} });
      expect([byMember.status, errorCode(byMember)]).toEqual([403, 'forbidden']);
      const byOther = await t.call('PUT', `/device-v2/${kitchen.deviceId}/status`, { token: hall.token, body: {} });
      expect([byOther.status, errorCode(byOther)]).toEqual([403, 'forbidden']);
      expect((await t.call('GET', `/device-v2/${kitchen.deviceId}/status`, { token })).body.isOnline).toBe(false);
    });

    it.each([
      ['an unknown field', { battery: 3 }],
      ['a negative position', { position: -1 }],
      ['a volume over 100', { userVolumePercentage: 101 }],
      ['an unknown playback status', { playbackStatus: 'rewinding' }],
    ])('refuses a report with %s (400)', async (_what, body) => {
      const { token } = await member();
      const kitchen = await register(token);
      const r = await report(kitchen, body);
      expect([r.status, errorCode(r)]).toEqual([400, 'bad-request']);
    });
  });

  describe('config', () => {
    it('answers the documented defaults, then keeps what PUT and PATCH change', async () => {
      const { token } = await member();
      const kitchen = await register(token);
      const first = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/config`, { token }), 200);
      const { device } = first.body;
      expect(device).toMatchObject({ deviceId: kitchen.deviceId, name: 'Kitchen', deviceType: 'cardshelf-browser', online: false, errorCode: null });
      expect(typeof device.deviceFamily).toBe('string');
      expect(device.config).toMatchObject({ maxVolumeLimit: '16', nightMaxVolumeLimit: '10', repeatAll: false, dayTime: '07:00', alarms: [] });
      expect(device.shortcuts).toEqual({ versionId: '', modes: { day: { content: [] }, night: { content: [] } } });
      expect(device.status).toMatchObject({ deviceId: kitchen.deviceId, activeCard: 'none' });

      const put = await t.call('PUT', `/device-v2/${kitchen.deviceId}/config`, { token, body: { name: 'Big kitchen', config: { maxVolumeLimit: '12', repeatAll: true } } });
      expect(expectStatus(put, 200).body).toEqual({ status: 'ok' });
      expectStatus(await t.call('PATCH', `/device-v2/${kitchen.deviceId}/config`, { token, body: { config: { nightTime: '20:30' } } }), 200);
      const after = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/config`, { token }), 200).body.device;
      expect(after.name).toBe('Big kitchen');
      expect(after.config).toMatchObject({ maxVolumeLimit: '12', repeatAll: true, nightTime: '20:30', dayTime: '07:00' });
      const listed = expectStatus(await t.call('GET', '/device-v2/devices/mine', { token }), 200);
      expect(listed.body.devices[0].name).toBe('Big kitchen');
    });

    it('takes back the config it answered, changed, with the deviceId in the body (as yoto_api writes it)', async () => {
      const { token } = await member();
      const kitchen = await register(token);
      const read = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/config`, { token }), 200).body.device;
      const body = { deviceId: kitchen.deviceId, config: { ...read.config, hourFormat: '12', daySoundsOff: '1' } };
      expectStatus(await t.call('PUT', `/device-v2/${kitchen.deviceId}/config`, { token, body }), 200);
      const after = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/config`, { token }), 200).body.device;
      expect(after.config).toEqual({ ...read.config, hourFormat: '12', daySoundsOff: '1' });
    });

    it.each([
      ['a volume limit over 16', { config: { maxVolumeLimit: '17' } }],
      ['a number where the service has a string', { config: { maxVolumeLimit: 12 } }],
      ['a time that is no time', { config: { dayTime: '25:00' } }],
      ['a colour that is no colour', { config: { ambientColour: 'blue' } }],
      ['an unknown setting', { config: { volumeMax: '3' } }],
      ['an unknown top-level field', { volume: 3 }],
      ['an empty name', { name: '' }],
      ['the id of another device in the body', { deviceId: 'not-this-one', name: 'X' }],
    ])('refuses %s with 400, and stores nothing', async (_what, body) => {
      const { token } = await member();
      const kitchen = await register(token);
      const r = await t.call('PUT', `/device-v2/${kitchen.deviceId}/config`, { token, body });
      expect([r.status, errorCode(r)]).toEqual([400, 'bad-request']);
      const after = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/config`, { token }), 200).body.device;
      expect(after.name).toBe('Kitchen');
      expect(after.config.maxVolumeLimit).toBe('16');
    });

    it('needs family:library:manage to change (403 with view only)', async () => {
      const { userId, token } = await member();
      const kitchen = await register(token);
      const r = await t.call('PUT', `/device-v2/${kitchen.deviceId}/config`, { token: await t.token(userId, 'family:library:view'), body: { name: 'X' } });
      expect([r.status, errorCode(r)]).toEqual([403, 'forbidden']);
    });
  });

  describe('shortcuts', () => {
    it('stores the shortcuts, with a new versionId, shown by the config', async () => {
      const { token } = await member();
      const kitchen = await register(token);
      const shortcuts = {
        modes: {
          day: { content: [{ cmd: 'track-play', params: { card: 'abcde', chapter: '01', track: '01' } }] },
          night: { content: [] },
        },
      };
      expect(expectStatus(await t.call('PUT', `/device-v2/${kitchen.deviceId}/shortcuts`, { token, body: { shortcuts } }), 200).body).toEqual({ status: 'ok' });
      const stored = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/config`, { token }), 200).body.device.shortcuts;
      expect(stored.modes).toEqual(shortcuts.modes);
      expect(stored.versionId).toMatch(/^[0-9a-f]{24}$/);
    });

    it.each([
      ['no modes', { shortcuts: {} }],
      ['a shortcut without params', { shortcuts: { modes: { day: { content: [{ cmd: 'track-play' }] }, night: { content: [] } } } }],
      ['a bare array', { shortcuts: [] }],
    ])('refuses %s (400)', async (_what, body) => {
      const { token } = await member();
      const kitchen = await register(token);
      const r = await t.call('PUT', `/device-v2/${kitchen.deviceId}/shortcuts`, { token, body });
      expect([r.status, errorCode(r)]).toEqual([400, 'bad-request']);
    });
  });

  describe('commands', () => {
    it('refuses a command to a player that never reported (409 device-offline, a plain message)', async () => {
      const { token } = await member();
      const kitchen = await register(token);
      const r = await t.call('POST', `/device-v2/${kitchen.deviceId}/command`, { token, body: { command: 'pause' } });
      expect([r.status, errorCode(r)]).toEqual([409, 'device-offline']);
      expect(r.body.error.message).toContain("'Kitchen' is offline");
    });

    it('accepts every command to an online player', async () => {
      const { userId, token } = await member();
      const kitchen = await register(token);
      expectStatus(await report(kitchen), 200);
      const card = await createCard(t, userId);
      const commands = [
        { command: 'card-play', cardId: card.cardId, chapterKey: '01', trackKey: '01', secondsIn: 5 },
        { command: 'pause' },
        { command: 'resume' },
        { command: 'next' },
        { command: 'previous' },
        { command: 'volume', volume: 30 },
        { command: 'volumeUp' },
        { command: 'volumeDown' },
        { command: 'stop' },
        { command: 'play' },
        { command: 'card-play', cardId: card.cardId, cutOff: 20, anyButtonStop: true },
        { command: 'sleep-timer', seconds: 600 },
        { command: 'sleep-timer', seconds: 0 },
      ];
      for (const body of commands) {
        const r = expectStatus(await t.call('POST', `/device-v2/${kitchen.deviceId}/command`, { token, body }), 200);
        expect(r.body).toEqual({ status: 'ok', commandId: expect.stringMatching(/^[0-9a-f]{24}$/) });
      }
    });

    it.each([
      ['card-play without a card', { command: 'card-play' }, "body must have required property 'cardId'"],
      ['volume without a volume', { command: 'volume' }, "body must have required property 'volume'"],
      ['a volume over 100', { command: 'volume', volume: 101 }, 'body/volume must be <= 100'],
      ['pause with a card', { command: 'pause', cardId: 'abcde' }, "body has a field it does not take: 'cardId'"],
      ['volume with a card', { command: 'volume', volume: 3, cardId: 'abcde' }, "body has a field it does not take: 'cardId'"],
      ['a cutOff that is not whole seconds', { command: 'card-play', cardId: 'abcde', cutOff: 1.5 }, 'body/cutOff must be integer'],
      ['anyButtonStop not a boolean', { command: 'card-play', cardId: 'abcde', anyButtonStop: 'yes' }, 'body/anyButtonStop must be boolean'],
      ['a sleep timer without seconds', { command: 'sleep-timer' }, "body must have required property 'seconds'"],
      ['a sleep timer over a day', { command: 'sleep-timer', seconds: 86_401 }, 'body/seconds must be <= 86400'],
      ['a negative sleep timer', { command: 'sleep-timer', seconds: -1 }, 'body/seconds must be >= 0'],
      ['an unknown command', { command: 'explode' }, 'body/command must be one of "card-play", "play", "pause", "resume", "stop", "next", "previous", "volume", "volumeUp", "volumeDown", "sleep-timer"'],
      ['no command', { volume: 3 }, "body must have required property 'command'"],
      ['a command that is not a string', { command: 7 }, 'body/command must be string'],
    ])('refuses %s (400, saying what is wrong)', async (_what, body, message) => {
      const { token } = await member();
      const kitchen = await register(token);
      expectStatus(await report(kitchen), 200);
      const r = await t.call('POST', `/device-v2/${kitchen.deviceId}/command`, { token, body });
      expect([r.status, errorCode(r)]).toEqual([400, 'bad-request']);
      expect(r.body.error.message).toContain(message);
    });

    it('answers 404 for a card the family may not play (a premium catalogue card, another user\'s card)', async () => {
      const { token } = await member();
      const kitchen = await register(token);
      expectStatus(await report(kitchen), 200);
      const premium = await putCatalogueCard(t, 'premium');
      const stranger = await createCard(t, newUser('stranger'));
      for (const cardId of [premium, stranger.cardId as string]) {
        const r = await t.call('POST', `/device-v2/${kitchen.deviceId}/command`, { token, body: { command: 'card-play', cardId } });
        expect([r.status, errorCode(r)]).toEqual([404, 'not-found']);
      }
    });
  });

  describe("a player's credential", () => {
    it('reads the cards its family may play, and nothing beyond a player\'s needs', async () => {
      const { userId, token } = await member();
      const kitchen = await register(token);
      const card = await createCard(t, userId);
      const read = expectStatus(await t.call('GET', `/card/${card.cardId}?playable=true`, { token: kitchen.token }), 200);
      expect(read.body.card.cardId).toBe(card.cardId);
      expectStatus(await t.call('GET', '/card/family/library', { token: kitchen.token }), 200);
      const refused: [string, string, unknown?][] = [
        ['POST', '/content', { title: 'x' }],
        ['GET', '/user/family'],
        ['GET', '/card/mine'],
        ['POST', '/wishlists', { name: 'x', content: [] }],
        ['POST', `/device-v2/${kitchen.deviceId}/command`, { command: 'pause' }],
        ['POST', '/device-v2/devices/mine', { name: 'Another' }],
        ['DELETE', `/device-v2/${kitchen.deviceId}`],
      ];
      for (const [method, url, body] of refused) {
        const r = await t.call(method, url, { token: kitchen.token, body });
        expect([method, url, r.status, errorCode(r)]).toEqual([method, url, 403, 'forbidden']);
      }
    });

    it('is revoked at once when a member removes the player', async () => {
      const { userId, token } = await member();
      const kitchen = await register(token);
      const card = await createCard(t, userId);
      expectStatus(await report(kitchen), 200);
      expectStatus(await t.call('GET', `/card/${card.cardId}`, { token: kitchen.token }), 200);

      expect(expectStatus(await t.call('DELETE', `/device-v2/${kitchen.deviceId}`, { token }), 200).body).toEqual({ status: 'ok' });
      for (const r of [await report(kitchen), await t.call('GET', `/card/${card.cardId}`, { token: kitchen.token })]) {
        expect([r.status, errorCode(r)]).toEqual([401, 'unauthorized']);
        expect(r.body.error.message).toContain('removed');
      }
      const listed = expectStatus(await t.call('GET', '/device-v2/devices/mine', { token }), 200);
      expect(listed.body.devices).toEqual([]);
      const family = expectStatus(await t.call('GET', '/user/family?allowStub=true', { token }), 200);
      expect(family.body.family.devices).toEqual([]);
      const gone = await t.call('GET', `/device-v2/${kitchen.deviceId}/status`, { token });
      expect(gone.status).toBe(404);
    });

    it('stops working when the member who registered it leaves the family', async () => {
      const userId = newUser('leaver');
      const stays = newUser('stays');
      const familyId = await familyOf(t, [userId, stays]);
      const kitchen = await register(await t.token(userId));
      expectStatus(await report(kitchen), 200);
      // The operator lists the family without the member (and keeps the player).
      const r = await t.call('PUT', `/admin/families/${familyId}`, {
        token: await t.token('auth0|operator', 'admin'),
        body: { country: 'US', members: [{ userId: stays, approved: true }], devices: [{ deviceId: kitchen.deviceId }] },
      });
      expectStatus(r, 200);
      const after = await report(kitchen);
      expect([after.status, errorCode(after)]).toEqual([401, 'unauthorized']);
    });
  });
});
