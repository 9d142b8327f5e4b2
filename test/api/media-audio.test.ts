import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { expectStatus, newUser } from '../support/fixtures.js';
import { local, makeAudio, pollTranscode, sha256, startMediaStore, uploadAudio } from '../support/media.js';
import { transcodeRow } from '../support/rows.js';
import { openStore } from '../../src/db/store.js';
import { buildApp } from '../../src/app.js';
import { claimTranscode } from '../../src/modules/media/repository.js';

const SECRET = 'media-test-secret-0123456789';
const MANAGE = 'user:content:manage';

let t: TestApp;
let tone: Buffer;
let mediaStore: Awaited<ReturnType<typeof startMediaStore>>;
beforeAll(async () => {
  mediaStore = await startMediaStore();
  t = await startTestApp({ ...mediaStore.env, MEDIA_URL_SECRET: SECRET, PUBLIC_BASE_URL: 'https://shelf.example' });
  tone = await makeAudio(2, { title: 'A tone' });
});
afterAll(async () => {
  await t.close();
  await mediaStore.close();
});

describe('audio upload and transcode', () => {
  it('gives an upload URL without parameters, takes the PUT, and transcodes to AAC in MP4', async () => {
    const token = await t.token(newUser('maker'), MANAGE);
    const r = expectStatus(await t.call('GET', '/media/transcode/audio/uploadUrl', { token }), 200);
    expect(Object.keys(r.body.upload).sort()).toEqual(['uploadId', 'uploadUrl']);
    expect(r.body.upload.uploadUrl).toMatch(/^https:\/\/shelf\.example\/media\/upload\/[A-Za-z0-9_-]{43}\/file\?expires=\d+&signature=/);

    const before = expectStatus(await t.call('GET', `/media/upload/${r.body.upload.uploadId}/transcoded`, { token }), 200);
    expect(before.body.transcode.progress.phase).toBe('awaiting-upload');

    const put = await t.call('PUT', local(r.body.upload.uploadUrl), { rawBody: tone, headers: { 'content-type': 'audio/mpeg' } });
    expectStatus(put, 200);
    expect(put.body.upload).toEqual({ uploadId: r.body.upload.uploadId, sha256: sha256(tone), size: tone.length });

    const done = expectStatus(await pollTranscode(t, token, r.body.upload.uploadId), 200);
    const { transcodedSha256, transcodedInfo } = done.body.transcode;
    expect(transcodedSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(transcodedSha256).not.toBe(sha256(tone));
    expect(transcodedInfo.format).toBe('aac');
    expect(transcodedInfo.channels).toBe(2);
    expect(transcodedInfo.duration).toBeGreaterThan(1.9);
    expect(transcodedInfo.duration).toBeLessThan(2.2);
    expect(transcodedInfo.fileSize).toBeGreaterThan(1000);
    expect(transcodedInfo.metadata.title).toBe('A tone');

    // The same URL a second time: single use.
    const again = await t.call('PUT', local(r.body.upload.uploadUrl), { rawBody: tone });
    expect(again.status).toBe(403);
    expect(errorCode(again)).toBe('forbidden');
  });

  it("answers uploadUrl null for audio the caller stored before, and the upload resolves at once", async () => {
    const owner = await t.token(newUser('first'), MANAGE);
    const fresh = await makeAudio(1, { hz: 660 });
    const first = await uploadAudio(t, owner, fresh, `?sha256=${sha256(fresh)}&filename=tone.mp3`);
    expectStatus(first.put, 200);
    const done = await pollTranscode(t, owner, first.uploadId);

    const r = expectStatus(await t.call('GET', `/media/transcode/audio/uploadUrl?sha256=${sha256(fresh)}`, { token: owner }), 200);
    expect(r.body.upload.uploadUrl).toBeNull();
    const resolved = expectStatus(await pollTranscode(t, owner, r.body.upload.uploadId), 200);
    expect(resolved.body.transcode.transcodedSha256).toBe(done.body.transcode.transcodedSha256);
  });

  it("answers a hash only others stored as an unknown one: an upload URL, and the transcode only after the caller's bytes", async () => {
    const a = await t.token(newUser('holder-a'), MANAGE);
    const stored = await makeAudio(1, { hz: 690 });
    const first = await uploadAudio(t, a, stored, `?sha256=${sha256(stored)}`);
    expectStatus(first.put, 200);
    const done = await pollTranscode(t, a, first.uploadId);

    const m = await t.token(newUser('prober-m'), MANAGE);
    const known = expectStatus(await t.call('GET', `/media/transcode/audio/uploadUrl?sha256=${sha256(stored)}`, { token: m }), 200);
    const unknown = expectStatus(await t.call('GET', `/media/transcode/audio/uploadUrl?sha256=${sha256('never stored')}`, { token: m }), 200);
    // The same answer, field for field, as for a hash nobody stored: it tells nothing.
    for (const answer of [known, unknown]) {
      expect(Object.keys(answer.body.upload).sort()).toEqual(['uploadId', 'uploadUrl']);
      expect(answer.body.upload.uploadUrl).toMatch(/^https:\/\/shelf\.example\/media\/upload\/[A-Za-z0-9_-]{43}\/file\?expires=\d+&signature=/);
    }
    // Without the bytes, no transcode: the upload waits for them.
    const waiting = expectStatus(await t.call('GET', `/media/upload/${known.body.upload.uploadId}/transcoded`, { token: m }), 200);
    expect(waiting.body.transcode).toEqual({ uploadId: known.body.upload.uploadId, progress: { phase: 'awaiting-upload', percent: 0 } });
    // Other bytes under A's hash are refused; A's own bytes give the transcode A has.
    const wrong = await t.call('PUT', local(known.body.upload.uploadUrl), { rawBody: tone });
    expect(wrong.status).toBe(400);
    expectStatus(await t.call('PUT', local(known.body.upload.uploadUrl), { rawBody: stored }), 200);
    const mine = expectStatus(await pollTranscode(t, m, known.body.upload.uploadId), 200);
    expect(mine.body.transcode.transcodedSha256).toBe(done.body.transcode.transcodedSha256);
  });

  it('refuses bytes whose SHA-256 is not the declared one (400), and keeps the URL for the right bytes', async () => {
    const token = await t.token(newUser('hasher'), MANAGE);
    const other = await makeAudio(1, { hz: 330 });
    const r = expectStatus(await t.call('GET', `/media/transcode/audio/uploadUrl?sha256=${sha256(other)}`, { token }), 200);
    const wrong = await t.call('PUT', local(r.body.upload.uploadUrl), { rawBody: tone });
    expect(wrong.status).toBe(400);
    expect(errorCode(wrong)).toBe('bad-request');
    expect(wrong.body.error.message).toContain(sha256(tone));
    expect((await t.call('GET', `/media/upload/${r.body.upload.uploadId}/transcoded`, { token })).body.transcode.progress.phase).toBe(
      'awaiting-upload',
    );
    expectStatus(await t.call('PUT', local(r.body.upload.uploadUrl), { rawBody: other }), 200);
  });

  it.each([
    ['text', Buffer.from('just some text, not audio at all\n'.repeat(50))],
    ['a PNG image', Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4c40000000049454e44ae426082', 'hex')],
    ['nothing', Buffer.alloc(0)],
  ])('refuses %s with 400', async (_what, bytes) => {
    const token = await t.token(newUser('sniffed'), MANAGE);
    const { put } = await uploadAudio(t, token, bytes);
    expect(put.status).toBe(400);
    expect(errorCode(put)).toBe('bad-request');
  });

  it('ends a file ffmpeg cannot read as a failed transcode with a clear message', async () => {
    const token = await t.token(newUser('broken'), MANAGE);
    // A WAV header (so it sniffs as audio) naming a codec no decoder knows, then noise.
    const fmt = Buffer.alloc(16);
    fmt.writeUInt16LE(0x1234, 0); // format tag
    fmt.writeUInt16LE(2, 2); // channels
    fmt.writeUInt32LE(44100, 4);
    fmt.writeUInt32LE(44100 * 4, 8);
    fmt.writeUInt16LE(4, 12);
    fmt.writeUInt16LE(16, 14);
    const data = Buffer.alloc(4000, 7);
    const size = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
    const wav = Buffer.concat([
      Buffer.from('RIFF'), size(4 + 8 + 16 + 8 + data.length), Buffer.from('WAVE'),
      Buffer.from('fmt '), size(16), fmt, Buffer.from('data'), size(data.length), data,
    ]);
    const { uploadId, put } = await uploadAudio(t, token, wav);
    expectStatus(put, 200);
    const failed = await pollTranscode(t, token, uploadId);
    expect(failed.status).toBe(400);
    expect(failed.body.error.message).toMatch(/^transcoding failed: /);
  });

  it.each([
    ['a tampered signature', (u: URL) => u.searchParams.set('signature', 'A'.repeat(43))],
    ['no signature', (u: URL) => u.searchParams.delete('signature')],
    ['an expiry moved later', (u: URL) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 60))],
  ])('refuses an upload URL with %s (403)', async (_what, tamper) => {
    const token = await t.token(newUser('tamper'), MANAGE);
    const r = await t.call('GET', '/media/transcode/audio/uploadUrl', { token });
    const url = new URL(r.body.upload.uploadUrl);
    tamper(url);
    const put = await t.call('PUT', `${url.pathname}${url.search}`, { rawBody: tone });
    expect(put.status).toBe(403);
    expect(errorCode(put)).toBe('forbidden');
  });

  it('refuses an expired upload URL (403)', async () => {
    const token = await t.token(newUser('late'), MANAGE);
    const r = await t.call('GET', '/media/transcode/audio/uploadUrl', { token });
    const { uploadId } = r.body.upload;
    const expires = String(Math.floor(Date.now() / 1000) - 1);
    const signature = createHmac('sha256', SECRET).update(`upload:${uploadId}:${expires}`).digest('base64url');
    const put = await t.call('PUT', `/media/upload/${uploadId}/file?expires=${expires}&signature=${signature}`, { rawBody: tone });
    expect(put.status).toBe(403);
    expect(put.body.error.message).toMatch(/expired/);
  });

  it("answers another user's upload id like a missing one (404)", async () => {
    const owner = await t.token(newUser('owner'), MANAGE);
    const r = await t.call('GET', '/media/transcode/audio/uploadUrl', { token: owner });
    const stranger = await t.token(newUser('stranger'), MANAGE);
    for (const id of [r.body.upload.uploadId, 'x'.repeat(43)]) {
      const got = await t.call('GET', `/media/upload/${id}/transcoded`, { token: stranger });
      expect(got.status).toBe(404);
      expect(errorCode(got)).toBe('not-found');
    }
  });

  it('makes a loudness-normalised transcode when asked with loudnorm=true', async () => {
    const token = await t.token(newUser('loud'), MANAGE);
    const quiet = await makeAudio(2, { hz: 550, channels: 1 });
    const { uploadId } = await uploadAudio(t, token, quiet);
    const plain = expectStatus(await pollTranscode(t, token, uploadId), 200).body.transcode;
    const normalised = expectStatus(await pollTranscode(t, token, uploadId, '?loudnorm=true'), 200).body.transcode;
    expect(plain.transcodedInfo.channels).toBe(1);
    expect(normalised.transcodedInfo.channels).toBe(1);
    expect(normalised.transcodedSha256).not.toBe(plain.transcodedSha256);
  });

  it('asks for the scopes of DECISIONS.md', async () => {
    const viewer = await t.token(newUser('viewer'), 'user:content:view');
    expect((await t.call('GET', '/media/transcode/audio/uploadUrl', { token: viewer })).status).toBe(403);
    expect((await t.call('GET', '/media/transcode/audio/uploadUrl')).status).toBe(401);
    expect((await t.call('GET', `/media/upload/${'x'.repeat(43)}/transcoded`)).status).toBe(401);
  });

  it('refuses a malformed sha256 parameter (400)', async () => {
    const token = await t.token(newUser('malformed'), MANAGE);
    const r = await t.call('GET', '/media/transcode/audio/uploadUrl?sha256=nothex', { token });
    expect(r.status).toBe(400);
    expect(errorCode(r)).toBe('bad-request');
  });
});

describe('audio limits', () => {
  let small: TestApp;
  beforeAll(async () => {
    small = await startTestApp({ ...mediaStore.env, MEDIA_MAX_AUDIO_BYTES: '28000', MEDIA_QUOTA_BYTES: '30000' });
  });
  afterAll(() => small.close());

  it('refuses an upload over the size cap (413) and keeps nothing', async () => {
    const token = await small.token(newUser('big'), MANAGE);
    const big = await makeAudio(5);
    expect(big.length).toBeGreaterThan(28000);
    const { uploadId, put } = await uploadAudio(small, token, big);
    expect(put.status).toBe(413);
    expect(errorCode(put)).toBe('payload-too-large');
    const status = await small.call('GET', `/media/upload/${uploadId}/transcoded`, { token });
    expect(status.body.transcode.progress.phase).toBe('awaiting-upload');
  });

  it('refuses uploads beyond the per-user quota (413), counting each distinct file once', async () => {
    const token = await small.token(newUser('quota'), MANAGE);
    const a = await makeAudio(1, { hz: 200 });
    const b = await makeAudio(1, { hz: 300 });
    const c = await makeAudio(3, { hz: 400 });
    expect(a.length + b.length).toBeLessThan(30000);
    expect(a.length + b.length + c.length).toBeGreaterThan(30000);
    expectStatus((await uploadAudio(small, token, a)).put, 200);
    expectStatus((await uploadAudio(small, token, a)).put, 200); // the same bytes again: no more room used
    expectStatus((await uploadAudio(small, token, b)).put, 200);
    const over = (await uploadAudio(small, token, c)).put;
    expect(over.status).toBe(413);
    expect(over.body.error.message).toMatch(/quota/);
    // Another user has a quota of their own.
    const other = await small.token(newUser('quota2'), MANAGE);
    expectStatus((await uploadAudio(small, other, c)).put, 200);
  });
});

describe('the quota under concurrency', () => {
  let tight: TestApp;
  beforeAll(async () => {
    tight = await startTestApp({ ...mediaStore.env, MEDIA_QUOTA_BYTES: '30000' });
  });
  afterAll(() => tight.close());

  it('holds when uploads race: the bytes kept never exceed it', async () => {
    const token = await tight.token(newUser('racer'), MANAGE);
    const files = await Promise.all([150, 250, 350, 450, 550, 650].map((hz) => makeAudio(1, { hz })));
    const urls = await Promise.all(files.map(() => tight.call('GET', '/media/transcode/audio/uploadUrl', { token })));
    const puts = await Promise.all(
      files.map((bytes, i) => tight.call('PUT', local(urls[i]!.body.upload.uploadUrl), { rawBody: bytes, headers: { 'content-type': 'audio/mpeg' } })),
    );
    const kept = files.filter((_, i) => puts[i]!.status === 200);
    for (const put of puts) expect([200, 413]).toContain(put.status);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(files.length);
    expect(kept.reduce((n, f) => n + f.length, 0)).toBeLessThanOrEqual(30000);
  });
});

describe('the transcode queue', () => {
  it('takes over a job whose worker died (its lease lapsed) and finishes it', async () => {
    const token = await t.token(newUser('crash'), MANAGE);
    const audio = await makeAudio(1, { hz: 770 });
    const { uploadId } = await uploadAudio(t, token, audio);
    await pollTranscode(t, token, uploadId);
    // As a process that crashed mid-transcode leaves it: running, its lease in the past.
    const store = openStore(t.config.database);
    try {
      const past = new Date(Date.now() - 60_000).toISOString();
      await store.db
        .insertInto('transcodes')
        .values(transcodeRow({ source_sha256: sha256(audio), loudnorm: 1, status: 'running', attempts: 1, lease_until: past, progress: 40, created_at: past, updated_at: past }))
        .execute();
      const done = expectStatus(await pollTranscode(t, token, uploadId, '?loudnorm=true'), 200);
      expect(done.body.transcode.transcodedSha256).toMatch(/^[0-9a-f]{64}$/);
      const row = await store.db.selectFrom('transcodes').selectAll().where('source_sha256', '=', sha256(audio)).where('loudnorm', '=', 1).executeTakeFirstOrThrow();
      expect(row.attempts).toBe(2);
      expect(row.status).toBe('done');
    } finally {
      await store.db.destroy();
    }
  });

  it('gives each queued job to exactly one of many concurrent claimers', async () => {
    const stores = [openStore(t.config.database), openStore(t.config.database)];
    try {
      // Jobs of sources that are not stored, leased far ahead so that the app's own worker
      // leaves them alone; the claimers below act an hour later, when the leases have lapsed.
      const at = new Date(Date.now() + 3_600_000).toISOString();
      const sources = Array.from({ length: 6 }, (_, i) => sha256(`claim-${i}-${Date.now()}`));
      for (const s of sources) {
        await stores[0]!.db
          .insertInto('transcodes')
          .values(transcodeRow({ source_sha256: s, status: 'running', lease_until: at, created_at: at, updated_at: at }))
          .execute();
      }
      // Their leases lapse "now" as the claimers see it: an hour and a minute ahead.
      const now = new Date(Date.now() + 3_660_000).toISOString();
      const lease = new Date(Date.now() + 7_200_000).toISOString();
      const claims = await Promise.all(
        Array.from({ length: 12 }, (_, i) => claimTranscode(stores[i % 2]!.db, stores[i % 2]!.dialect, now, lease)),
      );
      const claimed = claims.filter((c) => c !== undefined).map((c) => c!.source_sha256);
      expect(claimed.filter((s) => sources.includes(s)).sort()).toEqual([...sources].sort());
      expect(new Set(claimed).size).toBe(claimed.length);
      await stores[0]!.db.deleteFrom('transcodes').where('source_sha256', 'in', sources).execute();
    } finally {
      for (const s of stores) await s.db.destroy();
    }
  });
});

describe('a restart', () => {
  it('leaves no job running: an instance stopping mid-transcode puts it back, and the next one finishes it', async () => {
    const env = await startMediaStore();
    const first = await startTestApp(env.env);
    let second: Awaited<ReturnType<typeof buildApp>> | undefined;
    try {
      const token = await first.token(newUser('restart'), MANAGE);
      const long = await makeAudio(90, { hz: 123 });
      const { uploadId, put } = await uploadAudio(first, token, long);
      expectStatus(put, 200);
      await first.app.close(); // at once: the transcode is queued or running

      const store = openStore(first.config.database);
      try {
        const job = await store.db.selectFrom('transcodes').selectAll().where('source_sha256', '=', sha256(long)).executeTakeFirstOrThrow();
        expect(['queued', 'done']).toContain(job.status);
      } finally {
        await store.db.destroy();
      }

      second = await buildApp(first.config);
      let answer: any;
      for (let i = 0; i < 600; i++) {
        const r = await second.inject({ method: 'GET', url: `/media/upload/${uploadId}/transcoded`, headers: { authorization: `Bearer ${token}` } });
        expect(r.statusCode).toBe(200);
        answer = r.json().transcode;
        if (answer.transcodedSha256) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(answer.transcodedSha256).toMatch(/^[0-9a-f]{64}$/);
      expect(answer.transcodedInfo.duration).toBeGreaterThan(89);
    } finally {
      await second?.close();
      await first.close();
      await env.close();
    }
  });
});
