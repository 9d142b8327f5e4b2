import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { expectStatus, newUser } from '../support/fixtures.js';
import { ffmpeg, makeAudio, pollTranscode, sha256, startMediaStore, uploadAudio } from '../support/media.js';
import { createMediaUrlSigner } from '../../src/modules/media/media-urls.js';
import { loadConfig } from '../../src/config.js';
import { findBinaries, requireBinaries, type TranscodedInfo } from '../../src/modules/media/transcoder.js';

/**
 * Audio already in the players' form (AAC-LC in MP4, mono or stereo, a player's sample rate, at
 * most 320 kbit/s) is copied into the transcode, not encoded again; everything else is encoded.
 * Through HTTP (upload, poll, read the transcode back), on each store: SQLite with the file
 * system, PostgreSQL with S3.
 */

const run = promisify(execFile);
const SECRET = 'media-passthrough-secret-0123456789';
const MANAGE = 'user:content:manage';
const ffprobe = requireBinaries(findBinaries(loadConfig().media)).ffprobe;
const signer = createMediaUrlSigner('/media/files/{hash}', SECRET);

let t: TestApp;
let dir: string;
let mediaStore: Awaited<ReturnType<typeof startMediaStore>>;
beforeAll(async () => {
  mediaStore = await startMediaStore();
  t = await startTestApp({ ...mediaStore.env, MEDIA_URL_SECRET: SECRET });
  dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-passthrough-'));
});
afterAll(async () => {
  await t.close();
  await mediaStore.close();
  await rm(dir, { recursive: true, force: true });
});

let made = 0;
/** A file ffmpeg makes from a 3 s tone (and noise, so the encoder has work) with `args` for its output. */
async function make(name: string, args: string[], extraInputs: string[] = []): Promise<Buffer> {
  const file = path.join(dir, `${made++}-${name}`);
  await run(ffmpeg(), [
    '-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'lavfi', '-i', `sine=frequency=${300 + made * 10}:duration=3`, '-f', 'lavfi', '-i', 'anoisesrc=d=3:a=0.05',
    ...extraInputs,
    '-filter_complex', '[0:a][1:a]amix=inputs=2[mixed]', '-map', '[mixed]',
    '-metadata', 'title=Made here', ...args, file,
  ]);
  return readFile(file);
}

/** The MD5 of the first audio stream's packets, as stored (not decoded): equal when the audio was copied. */
async function audioPackets(bytes: Buffer): Promise<string> {
  const file = path.join(dir, `packets-${sha256(bytes)}`);
  await writeFile(file, bytes);
  const { stdout } = await run(ffmpeg(), ['-hide_banner', '-loglevel', 'error', '-i', file, '-map', '0:a:0', '-c', 'copy', '-f', 'md5', '-']);
  return stdout.trim();
}

interface ProbedStream {
  codec_name: string;
  profile: string;
  channels: number;
  sample_rate: string;
  bit_rate: string;
}

async function probeAudio(bytes: Buffer): Promise<ProbedStream> {
  const file = path.join(dir, `probe-${sha256(bytes)}`);
  await writeFile(file, bytes);
  const { stdout } = await run(ffprobe, ['-v', 'error', '-select_streams', 'a:0', '-show_streams', '-print_format', 'json', file]);
  return (JSON.parse(stdout) as { streams: ProbedStream[] }).streams[0]!;
}

/** Uploads `bytes` as a new user, waits for the transcode, and reads the transcoded file back. */
async function transcode(bytes: Buffer, query = ''): Promise<{ transcodedSha256: string; transcodedInfo: TranscodedInfo; output: Buffer }> {
  const token = await t.token(newUser('passthrough'), MANAGE);
  const { uploadId, put } = await uploadAudio(t, token, bytes);
  expectStatus(put, 200);
  const done = expectStatus(await pollTranscode(t, token, uploadId, query), 200);
  const { transcodedSha256, transcodedInfo } = (done.body as { transcode: { transcodedSha256: string; transcodedInfo: TranscodedInfo } }).transcode;
  const file = expectStatus(await t.call('GET', signer.sign(`service:#${transcodedSha256}`)), 200);
  const output = file.raw.rawPayload;
  expect(sha256(output)).toBe(transcodedSha256);
  return { transcodedSha256, transcodedInfo, output };
}

const aacInMp4 = ['-c:a', 'aac', '-b:a', '128k', '-ac', '2', '-ar', '44100', '-f', 'mp4'];

describe('audio already AAC in MP4 within the limits', () => {
  it.each<[string, () => Promise<Buffer>, { channels: number; sampleRate: number }]>([
    ['stereo AAC-LC at 128 kbit/s, 44.1 kHz, in M4A', () => make('a.m4a', aacInMp4), { channels: 2, sampleRate: 44100 }],
    ['mono AAC-LC at 64 kbit/s, 22.05 kHz, in MP4', () => make('b.mp4', ['-c:a', 'aac', '-b:a', '64k', '-ac', '1', '-ar', '22050', '-f', 'mp4']), { channels: 1, sampleRate: 22050 }],
    [
      'stereo AAC-LC with cover art',
      async () => {
        const cover = path.join(dir, 'cover.png');
        await run(ffmpeg(), ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=red:s=64x64', '-frames:v', '1', cover]);
        return make('c.m4a', ['-map', '2:v', '-c:v', 'copy', '-disposition:v:0', 'attached_pic', ...aacInMp4], ['-i', cover]);
      },
      { channels: 2, sampleRate: 44100 },
    ],
  ])('is copied, not encoded again: %s', async (_, source, expected) => {
    const bytes = await source();
    const { transcodedSha256, transcodedInfo, output } = await transcode(bytes);
    expect(await audioPackets(output)).toBe(await audioPackets(bytes));
    // Tags and other streams are dropped (the tags kept in the info): other bytes than the upload's.
    expect(transcodedSha256).not.toBe(sha256(bytes));
    const kept = await probeAudio(bytes);
    expect(transcodedInfo).toMatchObject({
      ...expected,
      format: 'aac',
      bitrate: Math.round(Number(kept.bit_rate) / 1000),
      fileSize: output.length,
      metadata: { title: 'Made here' },
    });
    expect((await probeAudio(output)).codec_name).toBe('aac');
  });

  it.each<[string, () => Promise<Buffer>]>([
    ['MP3', () => makeAudio(3, { hz: 523 })],
    // Decoded AAC: an encoder's own MP4 of it would not be what a copy of it writes.
    ['AAC in ADTS', () => make('j.aac', ['-c:a', 'aac', '-b:a', '128k', '-f', 'adts'])],
  ])("gives Cardshelf's own transcode (of %s), uploaded again, its own bytes: the same SHA-256", async (_, source) => {
    const first = await transcode(await source());
    const again = await transcode(first.output);
    expect(again.transcodedSha256).toBe(first.transcodedSha256);
    expect(again.transcodedSha256).toBe(sha256(first.output));
  });
});

describe('audio in any other form', () => {
  it.each<[string, () => Promise<Buffer>, string]>([
    ['MP3', () => make('d.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']), ''],
    ['AAC in ADTS (.aac, not MP4)', () => make('e.aac', ['-c:a', 'aac', '-b:a', '128k', '-f', 'adts']), ''],
    ['AAC at 96 kHz in M4A', () => make('f.m4a', ['-c:a', 'aac', '-b:a', '128k', '-ar', '96000', '-f', 'mp4']), ''],
    ['six-channel AAC in M4A', () => make('g.m4a', ['-c:a', 'aac', '-b:a', '384k', '-ac', '6', '-f', 'mp4']), ''],
    ['AAC in MP4 beside a video', () => make('h.mp4', ['-map', '2:v', '-c:v', 'mpeg4', ...aacInMp4], ['-f', 'lavfi', '-i', 'testsrc=d=3:s=64x64']), ''],
    ['AAC in M4A, loudness-normalised', () => make('i.m4a', aacInMp4), '?loudnorm=true'],
  ])('is encoded: %s', async (_, source, query) => {
    const bytes = await source();
    const { transcodedInfo, output } = await transcode(bytes, query);
    expect(await audioPackets(output)).not.toBe(await audioPackets(bytes));
    const made = await probeAudio(output);
    expect(made).toMatchObject({ codec_name: 'aac', profile: 'LC' });
    expect(made.channels).toBeLessThanOrEqual(2);
    expect([11025, 22050, 44100, 48000]).toContain(Number(made.sample_rate));
    expect(transcodedInfo).toMatchObject({ channels: made.channels, sampleRate: Number(made.sample_rate), bitrate: Math.round(Number(made.bit_rate) / 1000) });
    expect(transcodedInfo.bitrate).toBeGreaterThan(100);
    expect(transcodedInfo.bitrate).toBeLessThan(150);
  });
});

describe('the limits', () => {
  let short: TestApp;
  beforeAll(async () => {
    short = await startTestApp({ ...mediaStore.env, MEDIA_URL_SECRET: SECRET, MEDIA_MAX_TRACK_SECONDS: '2' });
  });
  afterAll(() => short.close());

  it('hold for audio that would be copied: too long is refused from the probe', async () => {
    const token = await short.token(newUser('passthrough-long'), MANAGE);
    const { uploadId, put } = await uploadAudio(short, token, await make('k.m4a', aacInMp4));
    expectStatus(put, 200);
    const failed = expectStatus(await pollTranscode(short, token, uploadId), 400);
    expect((failed.body as { error: { message: string } }).error.message).toBe('transcoding failed: the audio lasts 3 seconds; tracks may last at most 2 seconds');
  });
});

describe('with MEDIA_COPY_COMPATIBLE_AUDIO=false', () => {
  let encoding: TestApp;
  beforeAll(async () => {
    encoding = await startTestApp({ ...mediaStore.env, MEDIA_URL_SECRET: SECRET, MEDIA_COPY_COMPATIBLE_AUDIO: 'false' });
  });
  afterAll(() => encoding.close());

  it('AAC already in MP4 is encoded like anything else', async () => {
    const bytes = await make('l.m4a', aacInMp4);
    const token = await encoding.token(newUser('passthrough-off'), MANAGE);
    const { uploadId, put } = await uploadAudio(encoding, token, bytes);
    expectStatus(put, 200);
    const done = expectStatus(await pollTranscode(encoding, token, uploadId), 200);
    const { transcodedSha256 } = (done.body as { transcode: { transcodedSha256: string } }).transcode;
    const output = expectStatus(await encoding.call('GET', signer.sign(`service:#${transcodedSha256}`)), 200).raw.rawPayload;
    expect(await audioPackets(output)).not.toBe(await audioPackets(bytes));
    // And with the copy on (the default), the same bytes keep their packets.
    expect(await audioPackets((await transcode(bytes)).output)).toBe(await audioPackets(bytes));
  });
});
