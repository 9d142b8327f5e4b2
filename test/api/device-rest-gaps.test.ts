import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_USER_SCOPES, errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { VIEW, expectStatus, familyOf, newUser } from '../support/fixtures.js';
import { openEventStream, type EventStreamClient } from '../support/event-stream.js';
import { testDialect } from '../support/test-database.js';

/**
 * The REST routes the public clients call beside MQTT (issue 36): `POST
 * /device-v2/{id}/command/status` (yoto_api, yoto-nodejs-client), `POST /icons` (yoto-js's
 * `icons.upload`), and yoto-js's typed device writes, answered in the documented shapes.
 */

let t: TestApp;
let base: string;
const streams: EventStreamClient[] = [];
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of streams) s.close();
  await t.close();
});

async function member(): Promise<{ userId: string; token: string }> {
  const userId = newUser('parent');
  await familyOf(t, [userId]);
  return { userId, token: await t.token(userId, ALL_USER_SCOPES) };
}

async function register(memberToken: string, name = 'Kitchen'): Promise<{ deviceId: string; token: string }> {
  const r = expectStatus(await t.call('POST', '/device-v2/devices/mine', { token: memberToken, body: { name } }), 201);
  return { deviceId: r.body.device.deviceId, token: r.body.credential.accessToken };
}

const png = (size: number, color = '#3366ff'): Promise<Buffer> =>
  sharp({ create: { width: size, height: size, channels: 4, background: color } }).png().toBuffer();

describe(`the REST gaps of the public clients, ${testDialect()}`, () => {
  describe('POST /device-v2/{id}/command/status', () => {
    it("answers the player's last report; while it is online it publishes it again as player.status, offline it does not", async () => {
      const { token } = await member();
      const kitchen = await register(token, 'Kitchen');
      const attic = await register(token, 'Attic'); // never reports: offline
      const playing = { activeCard: 'abcde', chapterKey: '01', trackKey: '02', position: 12, playbackStatus: 'playing', userVolumePercentage: 40 };
      expectStatus(await t.call('PUT', `/device-v2/${kitchen.deviceId}/status`, { token: kitchen.token, body: playing }), 200);

      const stream = await openEventStream(base, token);
      streams.push(stream);
      expect(stream.status).toBe(200);

      const offline = expectStatus(await t.call('POST', `/device-v2/${attic.deviceId}/command/status`, { token, body: {} }), 200);
      expect(offline.body).toMatchObject({ status: 'ok', deviceStatus: { deviceId: attic.deviceId, isOnline: false, activeCard: 'none', reportedAt: null } });

      const online = expectStatus(await t.call('POST', `/device-v2/${kitchen.deviceId}/command/status`, { token, body: {} }), 200);
      expect(online.body).toMatchObject({ status: 'ok', deviceStatus: { deviceId: kitchen.deviceId, isOnline: true, ...playing } });
      const stored = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/status`, { token }), 200);
      expect(online.body.deviceStatus).toEqual(stored.body);

      const event = await stream.waitFor((e) => e.event === 'player.status', 10_000);
      expect(event.data).toMatchObject({ ids: { deviceId: kitchen.deviceId }, read: `/device-v2/${kitchen.deviceId}/status`, status: { ...playing, isOnline: true } });
      // The offline player's request came first and published nothing.
      expect(stream.events.filter((e) => e.event === 'player.status').map((e) => e.data.ids.deviceId)).toEqual([kitchen.deviceId]);
    });

    it("is open to a member who may only view the family's players, and takes a request without a body", async () => {
      const { userId, token } = await member();
      const kitchen = await register(token);
      const viewer = await t.token(userId, VIEW);
      expectStatus(await t.call('POST', `/device-v2/${kitchen.deviceId}/command/status`, { token: viewer, body: {} }), 200);
      expectStatus(await t.call('POST', `/device-v2/${kitchen.deviceId}/command/status`, { token: viewer }), 200);
    });

    it.each([
      ['a volume command (yoto-nodejs-client posts MQTT payloads here)', { volume: 50 }, '/device-v2/{id}/command'],
      ['a card to start', { uri: 'https://yoto.io/abcde' }, '/device-v2/{id}/command'],
      ['an array', [], 'invalid request'],
      ['a string', 'status', 'invalid request'],
    ])('refuses %s with 400 and nothing published', async (_what, body, says) => {
      const { token } = await member();
      const kitchen = await register(token);
      const r = await t.call('POST', `/device-v2/${kitchen.deviceId}/command/status`, { token, body });
      expect([r.status, errorCode(r)]).toEqual([400, 'bad-request']);
      expect(r.body.error.message).toContain(says);
    });

    it("answers 404 for an unknown device and for another family's, 401 without a token", async () => {
      const { token } = await member();
      const stranger = await member();
      const theirs = await register(stranger.token, 'Their kitchen');
      for (const id of [theirs.deviceId, 'y000000000000000000000000']) {
        const r = await t.call('POST', `/device-v2/${id}/command/status`, { token, body: {} });
        expect([r.status, errorCode(r)]).toEqual([404, 'not-found']);
      }
      const anonymous = await t.call('POST', `/device-v2/${theirs.deviceId}/command/status`, { body: {} });
      expect([anonymous.status, errorCode(anonymous)]).toEqual([401, 'unauthorized']);
    });
  });

  describe('POST /icons', () => {
    it("takes yoto-js's upload (a Buffer inside JSON) as the icon upload route does: {id, url} and the icon, titled by its name", async () => {
      const { token } = await member();
      const image = await png(40);
      // What yoto-js sends: JSON.stringify writes the Buffer {"type": "Buffer", "data": [...]}.
      const r = expectStatus(await t.call('POST', '/icons', { token, body: { file: image, name: 'leaf' } }), 200);
      expect(r.body).toMatchObject({ id: r.body.displayIcon.displayIconId, url: r.body.displayIcon.url, displayIcon: { title: 'leaf', new: true, public: false } });

      const mine = expectStatus(await t.call('GET', '/media/displayIcons/user/me', { token }), 200);
      expect(mine.body.displayIcons.map((i: { displayIconId: string; title: string }) => [i.displayIconId, i.title])).toEqual([[r.body.id, 'leaf']]);
      const served = await t.app.inject({ method: 'GET', url: new URL(r.body.url).pathname });
      const meta = await sharp(served.rawPayload).metadata();
      expect([served.statusCode, meta.format, meta.width, meta.height]).toEqual([200, 'png', 16, 16]);

      // The same image through the documented upload is the same icon, not a second one.
      const again = expectStatus(await t.call('POST', '/media/displayIcons/user/me/upload', { token, rawBody: image, headers: { 'content-type': 'image/png' } }), 200);
      expect([again.body.displayIcon.displayIconId, again.body.displayIcon.new]).toEqual([r.body.id, undefined]);
    });

    it.each([
      ['base64', (b: Buffer) => b.toString('base64')],
      ['a data: URL', (b: Buffer) => `data:image/png;base64,${b.toString('base64')}`],
    ])('takes the image as %s too', async (_what, encode) => {
      const { token } = await member();
      const r = expectStatus(await t.call('POST', '/icons', { token, body: { file: encode(await png(24, '#ff0000')), name: 'red' } }), 200);
      expect(r.body.displayIcon).toMatchObject({ title: 'red', new: true });
    });

    it.each([
      ['a Blob (JSON writes it {})', async () => ({ file: {}, name: 'x' })],
      ['no name', async () => ({ file: await png(20) })],
      ['a byte over 255', async () => ({ file: { type: 'Buffer', data: [256] }, name: 'x' }) ],
      ['text that is not base64', async () => ({ file: 'not base64!', name: 'x' })],
      ['bytes that are not an image', async () => ({ file: Buffer.from('hello, world'), name: 'x' })],
      ['no bytes at all', async () => ({ file: '', name: 'x' })],
      ['a field of its own', async () => ({ file: await png(20), name: 'x', autoConvert: false })],
    ])('refuses %s with 400, and keeps no icon', async (_what, body) => {
      const { token } = await member();
      const r = await t.call('POST', '/icons', { token, body: await body() });
      expect([r.status, errorCode(r)]).toEqual([400, 'bad-request']);
      expect(expectStatus(await t.call('GET', '/media/displayIcons/user/me', { token }), 200).body.displayIcons).toEqual([]);
    });

    it('answers 401 without a token', async () => {
      const r = await t.call('POST', '/icons', { body: { file: await png(20), name: 'x' } });
      expect([r.status, errorCode(r)]).toEqual([401, 'unauthorized']);
    });
  });

  describe('the size limit of images, for POST /icons too', () => {
    let small: TestApp;
    beforeAll(async () => {
      small = await startTestApp({ MEDIA_MAX_IMAGE_BYTES: '2048' });
    });
    afterAll(() => small.close());

    it.each([
      ['an image over MEDIA_MAX_IMAGE_BYTES', 3000],
      ['a body larger than any image of that size can make', 100_000],
    ])('refuses %s with 413', async (_what, size) => {
      const token = await small.token(newUser('parent'), ALL_USER_SCOPES);
      const r = await small.call('POST', '/icons', { token, body: { file: Buffer.alloc(size, 1), name: 'big' } });
      expect([r.status, errorCode(r)]).toEqual([413, 'payload-too-large']);
    });
  });

  describe("yoto-js's typed device writes", () => {
    it.each([
      ['maxVolume', { maxVolume: 80 }, 'maxVolumeLimit'],
      ['volume', { volume: 50 }, '/command'],
      ['ambientColor', { ambientColor: '#ff0000' }, 'ambientColour'],
      ['nightLightEnabled', { nightLightEnabled: true }, 'no such setting'],
      ['a name with maxVolume', { name: 'Big kitchen', maxVolume: 8 }, 'maxVolumeLimit'],
    ])('PATCH and PUT .../config with %s: 400 saying what to send, nothing stored', async (_field, body, says) => {
      const { token } = await member();
      const kitchen = await register(token);
      for (const method of ['PATCH', 'PUT']) {
        const r = await t.call(method, `/device-v2/${kitchen.deviceId}/config`, { token, body });
        expect([r.status, errorCode(r)]).toEqual([400, 'bad-request']);
        expect(r.body.error.message).toContain(says);
      }
      const { device } = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/config`, { token }), 200).body;
      expect([device.name, device.config.maxVolumeLimit, device.config.ambientColour]).toEqual(['Kitchen', '16', '#40bfd9']);
    });

    it('the documented settings still change', async () => {
      const { token } = await member();
      const kitchen = await register(token);
      expectStatus(await t.call('PATCH', `/device-v2/${kitchen.deviceId}/config`, { token, body: { config: { maxVolumeLimit: '8', nightMaxVolumeLimit: '4' } } }), 200);
      const { device } = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/config`, { token }), 200).body;
      expect([device.config.maxVolumeLimit, device.config.nightMaxVolumeLimit]).toEqual(['8', '4']);
    });

    it("PUT .../shortcuts with yoto-js's list: 400 naming the documented shape, nothing stored", async () => {
      const { token } = await member();
      const kitchen = await register(token);
      const r = await t.call('PUT', `/device-v2/${kitchen.deviceId}/shortcuts`, { token, body: { shortcuts: [{ position: 1, contentId: 'abcde' }] } });
      expect([r.status, errorCode(r)]).toEqual([400, 'bad-request']);
      expect(r.body.error.message).toContain('"modes"');
      const { device } = expectStatus(await t.call('GET', `/device-v2/${kitchen.deviceId}/config`, { token }), 200).body;
      expect(device.shortcuts).toEqual({ versionId: '', modes: { day: { content: [] }, night: { content: [] } } });
    });
  });
});
