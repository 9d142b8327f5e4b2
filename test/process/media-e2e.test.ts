import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { freePort } from '../support/free-port.js';
import { runCli, startServer, type ServerProcess } from '../support/processes.js';
import { makeAudio, sha256, startMediaStore } from '../support/media.js';

/**
 * A real client's flow against `cardshelf serve` with the demo loaded, over HTTP, with a real
 * audio file made by ffmpeg: upload URL, PUT, poll, a card with the returned hash, a playable
 * read, a range of the track; then a cover image, a display icon and a family image. On SQLite
 * with media on the file system, on PostgreSQL with an S3-compatible store.
 */

let deployment: Deployment;
let mediaStore: Awaited<ReturnType<typeof startMediaStore>>;
let server: ServerProcess;
let base: string;
let token: string;

beforeAll(async () => {
  deployment = await createDeployment();
  mediaStore = await startMediaStore();
  const env = { ...deployment.env, ...mediaStore.env };
  const seeded = await runCli(['seed', '--demo'], { ...env, LOG_LEVEL: 'silent' }).exited;
  expect(seeded.code).toBe(0);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = await startServer({ ...env, PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL: 'info' });
  token = await deployment.token('auth0|e2e-parent', 'user:content:manage family:library:manage');
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await deployment?.close();
  await mediaStore?.close();
});

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

describe('a client making a card, end to end', () => {
  it('uploads audio, waits for the transcode, makes a card of it and plays a range of the track', async () => {
    const audio = await makeAudio(4, { title: 'Story time' });

    const { body: got } = await api('GET', `/media/transcode/audio/uploadUrl?sha256=${sha256(audio)}&filename=story.mp3`);
    expect(got.upload.uploadUrl.startsWith(`${base}/media/upload/`)).toBe(true);
    const put = await fetch(got.upload.uploadUrl, { method: 'PUT', body: audio, headers: { 'content-type': 'audio/mpeg' } });
    expect(put.status).toBe(200);

    let transcode: any;
    for (let i = 0; i < 600 && !transcode?.transcodedSha256; i++) {
      const r = await api('GET', `/media/upload/${got.upload.uploadId}/transcoded?loudnorm=false`);
      expect(r.status).toBe(200);
      transcode = r.body.transcode;
      if (!transcode.transcodedSha256) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(transcode.transcodedSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(transcode.transcodedInfo).toMatchObject({ format: 'aac', channels: 2, metadata: { title: 'Story time' } });

    const created = await api('POST', '/content', {
      title: 'Story time',
      content: {
        chapters: [
          {
            key: '01',
            title: 'Chapter 1',
            tracks: [{ key: '01', title: 'Story', type: 'audio', trackUrl: `service:#${transcode.transcodedSha256}` }],
          },
        ],
      },
      metadata: { description: 'made end to end' },
    });
    expect(created.status).toBe(201);
    const track = created.body.card.content.chapters[0].tracks[0];
    expect(track).toMatchObject({ format: 'aac', fileSize: transcode.transcodedInfo.fileSize, channels: 'stereo' });

    const read = await api('GET', `/content/${created.body.card.cardId}?playable=true`);
    expect(read.status).toBe(200);
    const trackUrl: string = read.body.card.content.chapters[0].tracks[0].trackUrl;
    expect(trackUrl.startsWith(`${base}/media/files/${transcode.transcodedSha256}?`)).toBe(true);

    const whole = Buffer.from(await (await fetch(trackUrl)).arrayBuffer());
    expect(sha256(whole)).toBe(transcode.transcodedSha256);
    const ranged = await fetch(trackUrl, { headers: { range: 'bytes=1024-9215' } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 1024-9215/${whole.length}`);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(whole.subarray(1024, 9216))).toBe(true);
  });

  it('uploads a cover image, an icon and a family image, and reads them back; the demo has public icons', async () => {
    const photo = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#963' } }).jpeg().toBuffer();
    const cover = await fetch(`${base}/media/coverImage/user/me/upload?autoconvert=true&coverType=myo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'image/jpeg' },
      body: photo,
    });
    expect(cover.status).toBe(200);
    const { coverImage } = (await cover.json()) as any;
    const coverBytes = Buffer.from(await (await fetch(coverImage.mediaUrl)).arrayBuffer());
    const meta = await sharp(coverBytes).metadata();
    expect([meta.width, meta.height]).toEqual([520, 400]);

    const form = new FormData();
    form.append('file', new Blob([await sharp({ create: { width: 48, height: 48, channels: 4, background: '#3c3' } }).png().toBuffer()]));
    const icon = await fetch(`${base}/media/displayIcons/user/me/upload?autoConvert=true&filename=leaf`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(icon.status).toBe(200);
    const { displayIcon } = (await icon.json()) as any;
    expect((await sharp(Buffer.from(await (await fetch(displayIcon.url)).arrayBuffer())).metadata()).width).toBe(16);

    const image = await fetch(`${base}/media/family/images`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'image/jpeg' },
      body: photo,
    });
    const { imageId, url } = (await image.json()) as any;
    expect(imageId).toBe(sha256(photo));
    const redirect = await fetch(url, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const served = Buffer.from(await (await fetch(redirect.headers.get('location')!)).arrayBuffer());
    expect(served.equals(photo)).toBe(true);

    const publicIcons = await api('GET', '/media/displayIcons/user/yoto');
    expect(publicIcons.body.displayIcons.map((i: any) => i.title)).toEqual(expect.arrayContaining(['Sun', 'Moon']));
  });
});
