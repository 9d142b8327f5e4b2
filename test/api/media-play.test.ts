import { createHmac } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { openMediaStore } from '../../src/media-store/open-media-store.js';
import { testDialect } from '../support/test-database.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardBody, errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { expectStatus, newUser } from '../support/fixtures.js';
import { local, makeAudio, pollTranscode, sha256, startMediaStore, uploadAudio } from '../support/media.js';

const SECRET = 'media-play-secret-0123456789';
const SCOPES = 'user:content:manage';

let t: TestApp;
let owner: string;
let token: string;
let hash: string;
let info: Record<string, any>;
let cardId: string;

/** A card whose one track plays `trackHash`, with none of the media fields filled in. */
function cardOf(trackHash: string): Record<string, unknown> {
  const body = cardBody('Tone');
  const chapter = (body.content as any).chapters[0];
  chapter.tracks = [{ key: '01', title: 'Tone', type: 'audio', trackUrl: `service:#${trackHash}` }];
  return body;
}

let mediaStore: Awaited<ReturnType<typeof startMediaStore>>;
beforeAll(async () => {
  mediaStore = await startMediaStore();
  t = await startTestApp({ ...mediaStore.env, MEDIA_URL_SECRET: SECRET });
  owner = newUser('player');
  token = await t.token(owner, SCOPES);
  const { uploadId } = await uploadAudio(t, token, await makeAudio(3));
  const done = expectStatus(await pollTranscode(t, token, uploadId), 200).body.transcode;
  hash = done.transcodedSha256;
  info = done.transcodedInfo;
  cardId = expectStatus(await t.call('POST', '/content', { token, body: cardOf(hash) }), 201).body.card.cardId;
});
afterAll(async () => {
  await t.close();
  await mediaStore.close();
});

async function playableTrackUrl(path = `/content/${cardId}`): Promise<string> {
  const r = expectStatus(await t.call('GET', `${path}?playable=true`, { token }), 200);
  return r.body.card.content.chapters[0].tracks[0].trackUrl;
}

describe('tracks of stored audio', () => {
  it('get duration, fileSize, channels and format from the stored media when the client left them out', async () => {
    const card = expectStatus(await t.call('GET', `/content/${cardId}`, { token }), 200).body.card;
    expect(card.content.chapters[0].tracks[0]).toMatchObject({
      trackUrl: `service:#${hash}`,
      duration: Math.round(info.duration),
      fileSize: info.fileSize,
      channels: 'stereo',
      format: 'aac',
    });
  });

  it('keep the values the client sent', async () => {
    const body = cardOf(hash);
    Object.assign((body.content as any).chapters[0].tracks[0], { duration: 99, format: 'mp3' });
    const card = expectStatus(await t.call('POST', '/content', { token, body }), 201).body.card;
    expect(card.content.chapters[0].tracks[0]).toMatchObject({ duration: 99, format: 'mp3', fileSize: info.fileSize });
  });
});

describe('reading a card with playable=true', () => {
  it('answers the references to media the reader holds as signed, expiring URLs of this server, on both read paths', async () => {
    for (const path of [`/content/${cardId}`, `/card/${cardId}`]) {
      const r = expectStatus(await t.call('GET', `${path}?playable=true`, { token }), 200);
      const chapter = r.body.card.content.chapters[0];
      expect(chapter.tracks[0].trackUrl).toMatch(
        new RegExp(`^http://localhost:8080/media/files/${hash}\\?expires=\\d+&signature=[A-Za-z0-9_-]{43}$`),
      );
      // A reference to media nobody holds is nobody's to read: it stays as stored.
      expect(chapter.display.icon16x16).toBe('service:#icon1');
    }
  });

  it('answers references as stored without it (or with another value)', async () => {
    for (const query of ['', '?playable=false', '?playable=1']) {
      const r = expectStatus(await t.call('GET', `/content/${cardId}${query}`, { token }), 200);
      expect(r.body.card.content.chapters[0].tracks[0].trackUrl).toBe(`service:#${hash}`);
    }
  });

  it('still answers 404 to whoever may not read the card', async () => {
    const stranger = await t.token(newUser('stranger'), SCOPES);
    const r = await t.call('GET', `/content/${cardId}?playable=true`, { token: stranger });
    expect(r.status).toBe(404);
  });
});

describe('a signed media URL', () => {
  it('serves the bytes with Content-Type, Content-Length, ETag, Accept-Ranges and caching headers', async () => {
    const r = await t.call('GET', local(await playableTrackUrl()));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('audio/mp4');
    expect(Number(r.headers['content-length'])).toBe(info.fileSize);
    expect(r.headers.etag).toBe(`"${hash}"`);
    expect(r.headers['accept-ranges']).toBe('bytes');
    expect(r.headers['cache-control']).toMatch(/^private, max-age=\d+/);
    expect(sha256(r.raw.rawPayload)).toBe(hash);
  });

  it('serves a byte range (206), a suffix longer than the file as the whole file, and refuses one outside the file (416, error shape)', async () => {
    const url = local(await playableTrackUrl());
    const whole = (await t.call('GET', url)).raw.rawPayload;
    const part = await t.call('GET', url, { headers: { range: 'bytes=100-1099' } });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-1099/${info.fileSize}`);
    expect(part.headers['content-length']).toBe('1000');
    expect(part.raw.rawPayload.equals(whole.subarray(100, 1100))).toBe(true);

    const tail = await t.call('GET', url, { headers: { range: 'bytes=-10' } });
    expect(tail.status).toBe(206);
    expect(tail.raw.rawPayload.equals(whole.subarray(whole.length - 10))).toBe(true);

    // RFC 9110, 14.1.2: a suffix longer than the file selects all of it.
    for (const suffix of [info.fileSize, info.fileSize + 1, 99_999_999]) {
      const all = await t.call('GET', url, { headers: { range: `bytes=-${suffix}` } });
      expect(all.status, `bytes=-${suffix}`).toBe(206);
      expect(all.headers['content-range']).toBe(`bytes 0-${info.fileSize - 1}/${info.fileSize}`);
      expect(all.raw.rawPayload.equals(whole)).toBe(true);
    }
    const empty = await t.call('GET', url, { headers: { range: 'bytes=-0' } });
    expect(empty.status).toBe(416);

    const outside = await t.call('GET', url, { headers: { range: `bytes=${info.fileSize + 10}-` } });
    expect(outside.status).toBe(416);
    expect(errorCode(outside)).toBe('range-not-satisfiable');
    expect(outside.headers['content-range']).toBe(`bytes */${info.fileSize}`);
  });

  it('answers HEAD with the headers and no body, and If-None-Match with 304', async () => {
    const url = local(await playableTrackUrl());
    const head = await t.app.inject({ method: 'HEAD', url });
    expect(head.statusCode).toBe(200);
    expect(Number(head.headers['content-length'])).toBe(info.fileSize);
    expect(head.rawPayload.length).toBe(0);
    const cached = await t.call('GET', url, { headers: { 'if-none-match': `"${hash}"` } });
    expect(cached.status).toBe(304);
    expect(cached.raw.rawPayload.length).toBe(0);
  });

  it.each([
    ['a tampered signature', (u: URL) => u.searchParams.set('signature', 'B'.repeat(43))],
    ['no signature', (u: URL) => u.searchParams.delete('signature')],
    ['another hash', (u: URL) => (u.pathname = `/media/files/${'0'.repeat(64)}`)],
    ['a later expiry', (u: URL) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 1))],
  ])('refuses %s with 403 in the error shape, and no bytes', async (_what, tamper) => {
    const url = new URL(await playableTrackUrl());
    tamper(url);
    const r = await t.call('GET', `${url.pathname}${url.search}`);
    expect(r.status).toBe(403);
    expect(errorCode(r)).toBe('forbidden');
    expect(r.headers['content-type']).toMatch(/^application\/json/);
  });

  it('refuses an expired URL with 403', async () => {
    const expires = String(Math.floor(Date.now() / 1000) - 5);
    const signature = createHmac('sha256', SECRET).update(`${hash}:${expires}`).digest('base64url');
    const r = await t.call('GET', `/media/files/${hash}?expires=${expires}&signature=${signature}`);
    expect(r.status).toBe(403);
    expect(r.body.error.message).toMatch(/expired/);
  });

  it('answers 404 for a validly signed URL of media that is not stored', async () => {
    const missing = 'f'.repeat(64);
    const expires = String(Math.floor(Date.now() / 1000) + 60);
    const signature = createHmac('sha256', SECRET).update(`${missing}:${expires}`).digest('base64url');
    const icon = await t.call('GET', `/media/files/${missing}?expires=${expires}&signature=${signature}`);
    expect(icon.status).toBe(404);
    expect(errorCode(icon)).toBe('not-found');
  });
});

describe('the media store', () => {
  it('holds the bytes where configured: the file system on SQLite, the S3-compatible store on PostgreSQL', async () => {
    const onDisk = await stat(path.join(t.config.media.dir, 'objects', hash.slice(0, 2), hash)).catch(() => undefined);
    expect(await openMediaStore(t.config.media).stat(hash)).toEqual({ size: info.fileSize });
    if (t.config.media.s3) {
      expect(testDialect()).toBe('postgres');
      expect(onDisk).toBeUndefined();
    } else {
      expect(onDisk?.size).toBe(info.fileSize);
    }
  });
});
