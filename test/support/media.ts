import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { findBinaries, requireBinaries } from '../../src/modules/media/transcoder.js';
import type { Reply, TestApp } from './test-app.js';
import { testDialect } from './test-database.js';

const run = promisify(execFile);

/** The ffmpeg the server finds (the system's, or FFMPEG_PATH): the tests make their audio with it. */
export const ffmpeg = (): string => requireBinaries(findBinaries(loadConfig().media)).ffmpeg;

/** A real audio file made by ffmpeg: a sine tone of `seconds`, in `format` (mp3, wav, flac, ogg). */
export async function makeAudio(seconds: number, opts: { format?: string; hz?: number; channels?: number; title?: string } = {}): Promise<Buffer> {
  const { format = 'mp3', hz = 440, channels = 2 } = opts;
  const dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-audio-'));
  const file = path.join(dir, `tone.${format}`);
  await run(ffmpeg(), [
    '-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'lavfi', '-i', `sine=frequency=${hz}:duration=${seconds}`,
    '-ac', String(channels),
    ...(opts.title ? ['-metadata', `title=${opts.title}`] : []),
    ...(format === 'mp3' ? ['-c:a', 'libmp3lame', '-b:a', '64k'] : []),
    file,
  ]);
  return readFile(file);
}

export const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

/** Path and query of an absolute URL the server handed out, for `app.inject`. */
export const local = (url: string): string => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

/** Polls an upload until its transcode is done (or failed): the last answer. */
export async function pollTranscode(t: TestApp, token: string, uploadId: string, query = ''): Promise<Reply> {
  for (let i = 0; i < 600; i++) {
    const r = await t.call('GET', `/media/upload/${uploadId}/transcoded${query}`, { token });
    if (r.status !== 200 || r.body.transcode.transcodedSha256) return r;
    expect(r.body.transcode.progress.phase).toMatch(/^(queued|transcoding)$/);
    await sleep(100);
  }
  throw new Error(`upload ${uploadId} did not finish transcoding`);
}

/** Asks for an upload URL and PUTs `bytes` to it: the upload id. */
export async function uploadAudio(t: TestApp, token: string, bytes: Buffer, query = ''): Promise<{ uploadId: string; put: Reply }> {
  const r = await t.call('GET', `/media/transcode/audio/uploadUrl${query}`, { token });
  expect(r.status).toBe(200);
  const { uploadId, uploadUrl } = r.body.upload;
  const put = await t.call('PUT', local(uploadUrl), { rawBody: bytes, headers: { 'content-type': 'audio/mpeg' } });
  return { uploadId, put };
}

/**
 * The media store of this test project: the file system under DATA_DIR with SQLite, and with
 * PostgreSQL an S3-compatible store (s3rver, from npm, on a loopback port): the two deployments
 * the README describes. `env` goes into the app's environment.
 */
export async function startMediaStore(): Promise<{ env: Record<string, string>; close(): Promise<void> }> {
  if (testDialect() !== 'postgres') return { env: {}, close: async () => {} };
  const { default: S3rver } = await import('s3rver');
  const dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: 'media', configs: [] }] });
  const { port } = await server.run();
  return {
    env: {
      MEDIA_S3_BUCKET: 'media',
      MEDIA_S3_PREFIX: 'cardshelf/',
      MEDIA_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      MEDIA_S3_FORCE_PATH_STYLE: 'true',
      MEDIA_S3_ACCESS_KEY_ID: 'S3RVER',
      MEDIA_S3_SECRET_ACCESS_KEY: 'S3RVER',
    },
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
