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
  keepsAudio,
  transcodePlan,
  TranscodeRefused,
  type AudioProbe,
} from '../../src/modules/media/transcoder.js';

/** What ffprobe says of AAC-LC at 128 kbit/s in an M4A: what the players play. */
const aacInMp4: AudioProbe = {
  format: 'mov', duration: 10, channels: 2, sampleRate: 44100, codec: 'aac', profile: 'LC', bitrate: 128_000,
  audioStreams: 1, videoStreams: 0, tags: {},
};

describe('audio already in the target form', () => {
  it.each<[string, Partial<AudioProbe>]>([
    ['AAC-LC stereo at 128 kbit/s, 44.1 kHz', {}],
    ['mono', { channels: 1 }],
    ['at 11.025 kHz', { sampleRate: 11025 }],
    ['at 48 kHz, 320 kbit/s (the ceiling)', { sampleRate: 48000, bitrate: 320_000 }],
  ])('is copied: %s', (_, change) => {
    expect(keepsAudio({ ...aacInMp4, ...change }, { loudnorm: false })).toBe(true);
    const plan = transcodePlan('/m/in', '/m/out.m4a', { loudnorm: false, probe: { ...aacInMp4, ...change } });
    expect(plan).toMatchObject({ copied: true, scratch: [] });
    expect(plan.runs).toHaveLength(1);
    const [args] = plan.runs as [string[]];
    expect(args.slice(args.indexOf('-i'), args.indexOf('-i') + 2)).toEqual(['-i', 'file:/m/in']);
    expect(args.slice(args.indexOf('-c:a'), args.indexOf('-c:a') + 2)).toEqual(['-c:a', 'copy']);
    expect(args.at(-1)).toBe('/m/out.m4a');
    expect(args).not.toContain('-ar');
  });

  it.each<[string, Partial<AudioProbe>]>([
    ['ADTS AAC (not in MP4)', { format: 'aac' }],
    ['AAC in Matroska', { format: 'matroska' }],
    ['MP3 in MP4', { codec: 'mp3', profile: '' }],
    ['HE-AAC', { profile: 'HE-AAC' }],
    ['HE-AACv2', { profile: 'HE-AACv2' }],
    ['six channels', { channels: 6 }],
    ['at 96 kHz', { sampleRate: 96000 }],
    ['at 32 kHz', { sampleRate: 32000 }],
    ['over 320 kbit/s', { bitrate: 320_001 }],
    ['of an unknown bit rate', { bitrate: 0 }],
    ['one of two audio streams', { audioStreams: 2 }],
    ['beside a video', { videoStreams: 1 }],
  ])('is encoded: %s', (_, change) => {
    expect(keepsAudio({ ...aacInMp4, ...change }, { loudnorm: false })).toBe(false);
    const plan = transcodePlan('/m/in', '/m/out.m4a', { loudnorm: false, probe: { ...aacInMp4, ...change } });
    expect(plan).toMatchObject({ copied: false, scratch: ['/m/out.m4a.encoded'] });
    // Encoded to the scratch file, which is then copied to the output (as any copy is).
    const [encode, copy] = plan.runs as [string[], string[]];
    expect(encode).toEqual(expect.arrayContaining(['-c:a', 'aac', '-b:a', '128k', 'file:/m/in']));
    expect(encode.at(-1)).toBe('/m/out.m4a.encoded');
    expect(copy).toEqual(expect.arrayContaining(['-c:a', 'copy', 'file:/m/out.m4a.encoded']));
    expect(copy.at(-1)).toBe('/m/out.m4a');
  });

  it('is encoded when loudness is normalised (the filter needs the decoded audio)', () => {
    expect(keepsAudio(aacInMp4, { loudnorm: true })).toBe(false);
    const plan = transcodePlan('/m/in', '/m/out.m4a', { loudnorm: true, probe: aacInMp4 });
    expect(plan.copied).toBe(false);
    expect(plan.runs[0]).toEqual(expect.arrayContaining(['-af', '-c:a', 'aac']));
  });
});

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
    const probe: AudioProbe = { ...aacInMp4, format: 'flac', codec: 'flac', profile: '', bitrate: 900_000 };
    const [args] = transcodePlan('/m/in', '/m/out.m4a', { loudnorm: false, probe, maxSeconds: 18_000 }).runs as [string[]];
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
    expect(findBinaries(loadConfig({ FFMPEG_PATH: '/opt/ff/ffmpeg', FFPROBE_PATH: '/opt/ff/ffprobe', PATH: dir }).media)).toEqual({ ffmpeg: '/opt/ff/ffmpeg', ffprobe: '/opt/ff/ffprobe' });
  });

  it("takes the system's otherwise: /usr/bin, then PATH", () => {
    const found = findBinaries(loadConfig({ PATH: dir }).media);
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
