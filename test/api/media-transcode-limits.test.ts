import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCode, startTestApp, type TestApp } from '../support/test-app.js';
import { expectStatus, newUser } from '../support/fixtures.js';
import { ffmpeg, local, makeAudio, pollTranscode, sha256, startMediaStore, uploadAudio } from '../support/media.js';
import { audioUploadRow, transcodeRow } from '../support/rows.js';
import { openStore } from '../../src/db/store.js';
import { claimTranscode } from '../../src/modules/media/repository.js';

/**
 * Issue 17, rows 1, 5 and 7: no upload can stall the transcode queue (a cap on the decoded
 * duration, a time limit per job, users taking turns), only audio containers are opened (no
 * playlist or script that names other files), and transcodes count against the quota, which
 * stops an upload while it streams.
 */

const MANAGE = 'user:content:manage';
const run = promisify(execFile);

let mediaStore: Awaited<ReturnType<typeof startMediaStore>>;
let dir: string;
beforeAll(async () => {
  mediaStore = await startMediaStore();
  dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-limits-'));
});
afterAll(async () => {
  await mediaStore.close();
  await rm(dir, { recursive: true, force: true });
});

/** Silence as FLAC: tiny (45 KB for 6 hours at 8 kHz), but it decodes to `seconds` of audio. */
async function silence(seconds: number): Promise<Buffer> {
  const file = path.join(dir, `silence-${seconds}.flac`);
  await run(ffmpeg(), [
    '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'anullsrc=r=8000:cl=mono', '-t', String(seconds),
    '-c:a', 'flac', '-frame_size', '65535', file,
  ]);
  return readFile(file);
}

async function jobStatus(t: TestApp, source: string): Promise<string | undefined> {
  const store = openStore(t.config.database);
  try {
    const row = await store.db.selectFrom('transcodes').select('status').where('source_sha256', '=', source).where('loudnorm', '=', 0).executeTakeFirst();
    return row?.status;
  } finally {
    await store.db.destroy();
  }
}

describe('the transcode queue under long uploads (default limits)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(mediaStore.env);
  });
  afterAll(() => t.close());

  it('refuses audio longer than MEDIA_MAX_TRACK_SECONDS (5 h) from the probe, before decoding it', async () => {
    const m = await t.token(newUser('m-long'), MANAGE);
    const sixHours = await silence(6 * 3600);
    expect(sixHours.length).toBeLessThan(100_000);
    const { uploadId, put } = await uploadAudio(t, m, sixHours);
    expectStatus(put, 200);
    const failed = await pollTranscode(t, m, uploadId);
    expect(failed.status).toBe(400);
    expect(errorCode(failed)).toBe('bad-request');
    expect(failed.body.error.message).toBe('transcoding failed: the audio lasts 21600 seconds; tracks may last at most 18000 seconds');
  });

  it("lets B's short upload through while M's long ones wait: users take turns", async () => {
    const m = await t.token(newUser('m-queue'), MANAGE);
    const b = await t.token(newUser('b-queue'), MANAGE);
    // M queues three long (but allowed) files first, then B one 2-second tone.
    const long = await Promise.all([900, 901, 902].map((s) => silence(s)));
    const mine: string[] = [];
    for (const bytes of long) {
      const { uploadId, put } = await uploadAudio(t, m, bytes);
      expectStatus(put, 200);
      mine.push(uploadId);
    }
    const tone = await makeAudio(2, { hz: 880 });
    const { uploadId, put } = await uploadAudio(t, b, tone);
    expectStatus(put, 200);

    const done = expectStatus(await pollTranscode(t, b, uploadId), 200);
    expect(done.body.transcode.transcodedInfo.duration).toBeGreaterThan(1.9);
    // B's job ran before M's queue was through: oldest-first would have run all of M's first.
    const left = await Promise.all(long.map((bytes) => jobStatus(t, sha256(bytes))));
    expect(left.filter((s) => s === 'queued' || s === 'running').length).toBeGreaterThanOrEqual(1);
    // And M's files are transcoded in their turn.
    for (const id of mine) expectStatus(await pollTranscode(t, m, id), 200);
  }, 120_000);
});

describe('the claim: users take turns, across instances', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(mediaStore.env);
  });
  afterAll(() => t.close());

  /**
   * Jobs and uploads written straight to the database, leased an hour ahead so that the app's
   * own worker leaves them alone; the claimers act as if an hour and a minute had passed, when
   * those leases have lapsed (the jobs are then as good as queued).
   */
  async function scene(
    store: ReturnType<typeof openStore>,
    jobs: { user: string; source: string; created: number; lease: number; status?: 'running' | 'done' }[],
  ): Promise<void> {
    const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
    for (const job of jobs) {
      await store.db
        .insertInto('audio_uploads')
        .values(audioUploadRow({
          upload_id: `u-${job.source}`, user_id: job.user, state: 'received',
          source_sha256: job.source, url_expires_at: at(0), created_at: at(job.created), updated_at: at(job.created),
        }))
        .execute();
      await store.db
        .insertInto('transcodes')
        .values(transcodeRow({
          source_sha256: job.source, status: job.status ?? 'running', lease_until: at(job.lease),
          created_at: at(job.created), updated_at: at(job.created),
        }))
        .execute();
    }
  }
  const claimNow = () => new Date(Date.now() + 61 * 60_000).toISOString();
  const claimLease = () => new Date(Date.now() + 120 * 60_000).toISOString();

  it("gives the next worker B's job while M's runs, though M's waited longer", async () => {
    const store = openStore(t.config.database);
    const [m, b] = [`m-${Date.now()}`, `b-${Date.now()}`];
    try {
      await scene(store, [
        { user: m, source: sha256(`${m}-running`), created: 0, lease: 180 }, // M's job running (on another instance)
        { user: m, source: sha256(`${m}-1`), created: 1, lease: 60 },
        { user: m, source: sha256(`${m}-2`), created: 2, lease: 60 },
        { user: b, source: sha256(`${b}-1`), created: 3, lease: 60 },
      ]);
      const first = await claimTranscode(store.db, store.dialect, claimNow(), claimLease());
      expect(first?.source_sha256).toBe(sha256(`${b}-1`));
      // Then M's, oldest first: B has one running now too, and was served last.
      const second = await claimTranscode(store.db, store.dialect, claimNow(), claimLease());
      expect(second?.source_sha256).toBe(sha256(`${m}-1`));
    } finally {
      await store.db.destroy();
    }
  });

  it('takes the user served longest ago first when nobody runs anything', async () => {
    const store = openStore(t.config.database);
    const [m, b] = [`m2-${Date.now()}`, `b2-${Date.now()}`];
    try {
      await scene(store, [
        { user: m, source: sha256(`${m}-done`), created: 5, lease: 0, status: 'done' }, // M was just served
        { user: m, source: sha256(`${m}-1`), created: 1, lease: 60 },
        { user: b, source: sha256(`${b}-1`), created: 3, lease: 60 },
      ]);
      const first = await claimTranscode(store.db, store.dialect, claimNow(), claimLease());
      expect(first?.source_sha256).toBe(sha256(`${b}-1`));
    } finally {
      await store.db.destroy();
    }
  });
});

describe('the time limit of a job', () => {
  let t: TestApp;
  beforeAll(async () => {
    // One second a job, whatever its duration: any real transcode of two hours outlives it.
    t = await startTestApp({ ...mediaStore.env, MEDIA_TRANSCODE_TIME_MIN_SECONDS: '1', MEDIA_TRANSCODE_TIME_PERCENT: '0' });
  });
  afterAll(() => t.close());

  it('kills ffmpeg at the limit and fails the transcode with a message, for good', async () => {
    const m = await t.token(newUser('m-slow'), MANAGE);
    const twoHours = await silence(2 * 3600);
    const { uploadId, put } = await uploadAudio(t, m, twoHours);
    expectStatus(put, 200);
    const failed = await pollTranscode(t, m, uploadId);
    expect(failed.status).toBe(400);
    expect(failed.body.error.message).toBe('transcoding failed: transcoding took longer than its limit of 1 seconds and was stopped');
    const store = openStore(t.config.database);
    try {
      const row = await store.db.selectFrom('transcodes').selectAll().where('source_sha256', '=', sha256(twoHours)).executeTakeFirstOrThrow();
      // Failed once, not retried; no lease left to renew.
      expect(row).toMatchObject({ status: 'failed', attempts: 1, lease_until: null, transcoded_sha256: null });
    } finally {
      await store.db.destroy();
    }
  });
});

describe('containers that name other files', () => {
  let t: TestApp;
  let victim: string;
  beforeAll(async () => {
    t = await startTestApp(mediaStore.env);
    // A file on the server's disk that no upload may read.
    victim = path.join(dir, 'victim.mp3');
    await writeFile(victim, await makeAudio(3, { hz: 300 }));
  });
  afterAll(() => t.close());

  /**
   * A polyglot: an ID3v2 header whose footer flag makes ffmpeg skip 10 bytes more than
   * file-type does, so that file-type sees FLAC (and the PUT takes it as audio) while ffmpeg's
   * probe sees what follows: an HLS playlist or a concat script.
   */
  const polyglot = (text: string): Buffer =>
    Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 4, 0, 0x10, 0, 0, 0, 0]), Buffer.from('fLaC'), Buffer.alloc(6, 0x20), Buffer.from(text)]);

  it.each([
    ['an HLS playlist', () => `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:3,\n${victim}\n#EXT-X-ENDLIST\n`],
    ['a concat script', () => `ffconcat version 1.0\nfile ${path.basename(victim)}\nfile ${victim}\n`],
  ])('refuses %s that sniffs as audio, before opening what it names', async (_what, text) => {
    const m = await t.token(newUser('m-playlist'), MANAGE);
    const { uploadId, put } = await uploadAudio(t, m, polyglot(text()));
    expectStatus(put, 200); // file-type calls it FLAC
    const failed = await pollTranscode(t, m, uploadId);
    expect(failed.status).toBe(400);
    expect(failed.body.error.message).toBe(
      'transcoding failed: the file is not in an accepted audio container (a playlist, a script or another format)',
    );
  });
});

describe('the quota and transcodes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ ...mediaStore.env, MEDIA_QUOTA_BYTES: '100000' });
  });
  afterAll(() => t.close());

  it('counts the transcode: one that would not fit is not stored, and the poll says why', async () => {
    const token = await t.token(newUser('q-transcode'), MANAGE);
    const source = await makeAudio(8, { hz: 500 }); // 64 kbit/s: its transcode (128 kbit/s) is twice as big
    expect(source.length).toBeLessThan(100_000);
    const { uploadId, put } = await uploadAudio(t, token, source);
    expectStatus(put, 200);
    const failed = await pollTranscode(t, token, uploadId);
    expect(failed.status).toBe(400);
    expect(failed.body.error.message).toMatch(/^transcoding failed: the transcode \(\d+ bytes\) would exceed your media quota$/);
    const store = openStore(t.config.database);
    try {
      const outputs = await store.db.selectFrom('media_objects').select('sha256').where('content_type', '=', 'audio/mp4').execute();
      expect(outputs).toEqual([]);
      const held = await store.db.selectFrom('media_holdings').select(['kind', 'size']).execute();
      expect(held.map((h) => ({ kind: h.kind, size: Number(h.size) }))).toEqual([{ kind: 'audio-source', size: source.length }]);
    } finally {
      await store.db.destroy();
    }
  });

  it("does not let one user's quota fail the file for others: a new upload of it transcodes again", async () => {
    const tight = await t.token(newUser('q-tight'), MANAGE);
    const roomy = await t.token(newUser('q-roomy2'), MANAGE);
    const song = await makeAudio(2, { hz: 560 }); // ~16 KB: fits beside the filler, its transcode (~32 KB) does not
    const filler = await makeAudio(10, { hz: 570 });
    expectStatus((await uploadAudio(t, tight, filler)).put, 200); // leaves q-tight no room for song's transcode
    const first = await uploadAudio(t, tight, song);
    expectStatus(first.put, 200);
    const failed = await pollTranscode(t, tight, first.uploadId);
    expect(failed.status).toBe(400);
    expect(failed.body.error.message).toMatch(/would exceed your media quota/);

    const second = await uploadAudio(t, roomy, song);
    expectStatus(second.put, 200);
    const done = expectStatus(await pollTranscode(t, roomy, second.uploadId), 200);
    expect(done.body.transcode.transcodedSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('charges the transcode to each poller: one over quota gets 413, one with room gets it', async () => {
    const roomy = await t.token(newUser('q-roomy'), MANAGE);
    const full = await t.token(newUser('q-full'), MANAGE);
    const small = await makeAudio(2, { hz: 520 });
    const filler = await makeAudio(9, { hz: 530 });
    expectStatus((await uploadAudio(t, full, filler)).put, 200); // most of q-full's quota
    const first = await uploadAudio(t, roomy, small);
    expectStatus(first.put, 200);
    const done = expectStatus(await pollTranscode(t, roomy, first.uploadId), 200);
    const size = done.body.transcode.transcodedInfo.fileSize as number;
    expect(filler.length + small.length + size).toBeGreaterThan(100_000);

    const second = await uploadAudio(t, full, small);
    expectStatus(second.put, 200);
    const over = await t.call('GET', `/media/upload/${second.uploadId}/transcoded`, { token: full });
    expect(over.status).toBe(413);
    expect(errorCode(over)).toBe('payload-too-large');
    expect(over.body.error.message).toMatch(/quota/);
  });

  it('stops an upload at the quota while it streams, without waiting for the rest of the body', async () => {
    const token = await t.token(newUser('q-stream'), MANAGE);
    const r = expectStatus(await t.call('GET', '/media/transcode/audio/uploadUrl', { token }), 200);
    // An MP3's first bytes, then more than the quota, and then the body never ends: a server
    // that wrote the body whole before checking would wait for ever.
    const body = new PassThrough();
    const head = await makeAudio(1, { hz: 540 });
    body.write(head);
    body.write(Buffer.alloc(100_001 - head.length + 1, 0));
    try {
      const put = await t.app.inject({ method: 'PUT', url: local(r.body.upload.uploadUrl), payload: body, headers: { 'content-type': 'audio/mpeg' } });
      expect(put.statusCode).toBe(413);
      expect(put.json().error.code).toBe('payload-too-large');
      expect(put.json().error.message).toBe('this upload would exceed your media quota (100000 bytes left of 100000)');
    } finally {
      body.destroy();
    }
    // Nothing kept, and the URL still usable for a file that fits.
    expectStatus(await t.call('PUT', local(r.body.upload.uploadUrl), { rawBody: await makeAudio(1, { hz: 545 }) }), 200);
  });
});
