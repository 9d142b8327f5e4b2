import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { checkDuration, timeLimitMs } from '../../src/modules/media/transcode-worker.js';
import {
  ACCEPTED_FORMATS,
  acceptedFormat,
  createTranscoder,
  findBinaries,
  transcodeArgs,
  TranscodeRefused,
  type AudioProbe,
} from '../../src/modules/media/transcoder.js';

describe('the format whitelist', () => {
  it.each([
    ['mp3', 'mp3'],
    ['flac', 'flac'],
    ['wav', 'wav'],
    ['ogg', 'ogg'],
    ['mov,mp4,m4a,3gp,3g2,mj2', 'mov'],
    ['matroska,webm', 'matroska'],
  ])('accepts the audio container %s (forced as -f %s)', (probed, forced) => {
    expect(acceptedFormat(probed)).toBe(forced);
  });

  it.each(['hls', 'concat', 'dash', 'image2', 'ffmetadata', 'lavfi', 'tee', 'sdp', 'rtp', 'subfile', 'mpegts', '', undefined])(
    'refuses %s',
    (probed) => {
      expect(acceptedFormat(probed)).toBeUndefined();
    },
  );

  it('names no demuxer that opens other files or URLs', () => {
    for (const name of ['hls', 'applehttp', 'concat', 'dash', 'image2', 'sdp', 'rtsp', 'tee', 'data', 'subfile', 'imf', 'mpl2']) {
      expect(ACCEPTED_FORMATS).not.toContain(name);
    }
  });

  it('gives ffmpeg the container the probe found, local files only, and the cap on decoded seconds', () => {
    const probe: AudioProbe = { format: 'flac', duration: 10, channels: 2, sampleRate: 44100, codec: 'flac', tags: {} };
    const args = transcodeArgs('/m/in', '/m/out.m4a', { loudnorm: false, probe, maxSeconds: 18_000 });
    const input = args.indexOf('-i');
    const before = args.slice(0, input);
    expect(args[input + 1]).toBe('file:/m/in');
    expect(before).toEqual(expect.arrayContaining(['-protocol_whitelist', 'file', '-format_whitelist', ACCEPTED_FORMATS.join(',')]));
    expect(before[before.indexOf('-f') + 1]).toBe('flac');
    expect(before[before.indexOf('-t') + 1]).toBe('18000');
  });
});

describe('the binaries', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-bin-'));
    for (const name of ['ffmpeg', 'ffprobe']) {
      await writeFile(path.join(dir, name), '#!/bin/sh\n');
      await chmod(path.join(dir, name), 0o755);
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('takes FFMPEG_PATH and FFPROBE_PATH first', () => {
    expect(findBinaries({ ffmpeg: '/opt/ff/ffmpeg', ffprobe: '/opt/ff/ffprobe' }, dir)).toEqual({ ffmpeg: '/opt/ff/ffmpeg', ffprobe: '/opt/ff/ffprobe' });
  });

  it("takes the system's otherwise: /usr/bin, then PATH", () => {
    const found = findBinaries({}, dir);
    // This machine has Debian's ffmpeg in /usr/bin (CI installs it): it wins over PATH's.
    expect(found).toEqual({ ffmpeg: '/usr/bin/ffmpeg', ffprobe: '/usr/bin/ffprobe' });
  });

  it('fails every transcode with a clear message when there is no ffmpeg', async () => {
    const transcoder = createTranscoder({});
    await expect(transcoder.probe('/nowhere')).rejects.toThrow(new TranscodeRefused('the server cannot transcode: ffprobe is not installed'));
  });

  it('no longer depends on an ffmpeg bundled through npm', async () => {
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies).filter((n) => /ffmpeg|ffprobe/.test(n))).toEqual([]);
  });
});

describe('the limits of a job', () => {
  const limits = { maxTrackSeconds: 18_000, timeLimitMinSeconds: 60, timeLimitPercent: 25 };

  it('are documented defaults: 5 hours a track, 60 s plus 25% of the duration a job', () => {
    expect(loadConfig({}).media.transcodeLimits).toEqual(limits);
  });

  it('refuse a track longer than the cap, and take one at the cap', () => {
    expect(() => checkDuration(limits, { duration: 18_000.5 })).toThrow(TranscodeRefused);
    expect(() => checkDuration(limits, { duration: 18_000 })).not.toThrow();
  });

  it('give a job a floor plus a share of its duration', () => {
    expect(timeLimitMs(limits, { duration: 0 })).toBe(60_000);
    expect(timeLimitMs(limits, { duration: 3600 })).toBe(960_000);
  });
});
