import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { MediaConfig } from '../../config.js';

/**
 * ffmpeg and ffprobe, run as child processes. Audio is transcoded to what the players play, as
 * the public service documents it: AAC at 128 kbit/s in an MP4 (M4A) container, at 11.025,
 * 22.05, 44.1 or 48 kHz, mono or stereo; `loudnorm` adds EBU R128 loudness normalisation.
 * Audio that is already in that form (`keepsAudio`) is remuxed, not encoded again.
 */

export const OUTPUT_CONTENT_TYPE = 'audio/mp4';
const PLAYER_SAMPLE_RATES = [11025, 22050, 44100, 48000];
const BITRATE = '128k';
/**
 * The highest bit rate of AAC kept as it is, in bit/s: 320 kbit/s, the top of what encoders
 * offer for stereo AAC (the stores sell 256). Above it a file is larger for no gain a player's
 * speaker can give, so it is encoded at 128 kbit/s like anything else.
 */
const MAX_KEPT_BITRATE = 320_000;
/** EBU R128 targets for spoken word and music on small speakers (ffmpeg's loudnorm defaults, but -16 LUFS). */
const LOUDNORM = 'loudnorm=I=-16:TP=-1.5:LRA=11';

export interface AudioProbe {
  /** The demuxer ffprobe chose (the first of its names), one of ACCEPTED_FORMATS. */
  format: string;
  duration: number;
  channels: number;
  sampleRate: number;
  codec: string;
  /** The codec's profile as ffprobe names it ("LC", "HE-AAC", ...); '' when it names none. */
  profile: string;
  /** The audio stream's average bit rate in bit/s; 0 when ffprobe cannot tell. */
  bitrate: number;
  /** How many audio streams the file has (the first is the one used). */
  audioStreams: number;
  /** How many video streams it has that are not an attached picture (cover art). */
  videoStreams: number;
  /** The container's and stream's tags (title, artist, ...), lower-case keys. */
  tags: Record<string, string>;
}

export interface TranscodedInfo {
  duration: number;
  fileSize: number;
  channels: number;
  format: 'aac';
  sampleRate: number;
  bitrate: number;
  metadata: Record<string, string>;
}

/**
 * The transcode is refused for good (not audio, damaged, not an accepted container, too long,
 * over its time limit, over the quota): a final failure with a message for the user, never
 * retried.
 */
export class TranscodeRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TranscodeRefused';
  }
}

/**
 * The audio containers ffprobe and ffmpeg may open (ffmpeg's demuxer names). Everything else is
 * refused before a byte is decoded: above all the demuxers that open other files or URLs named
 * inside the upload (hls, concat, dash, playlists, image sequences), whatever the upload
 * claims to be. The video containers are those an upload may be (audio-uploads.ts).
 */
export const ACCEPTED_FORMATS: readonly string[] = [
  'mp3', 'flac', 'wav', 'w64', 'aiff', 'caf', 'ogg', 'aac', 'ac3', 'eac3', 'amr', 'ape', 'wv', 'tta', 'au',
  'asf', 'mpc', 'mpc8', 'mov', 'mp4', 'm4a', '3gp', '3g2', 'matroska', 'webm',
];

/** The demuxer to force for a probed `format_name` ("mov,mp4,m4a,3gp,3g2,mj2"): its first name, if accepted. */
export function acceptedFormat(formatName: string | undefined): string | undefined {
  const names = (formatName ?? '').split(',').map((n) => n.trim());
  return names.some((n) => ACCEPTED_FORMATS.includes(n)) ? names[0] : undefined;
}

/** What every ffprobe and ffmpeg run is given before its input: local files only, accepted containers only. */
function inputGuards(): string[] {
  return ['-protocol_whitelist', 'file', '-format_whitelist', ACCEPTED_FORMATS.join(',')];
}

export interface Transcoder {
  probe(file: string): Promise<AudioProbe>;
  /**
   * Transcodes `input` to `output`: a copy of its audio when `keepsAudio`, else an encode.
   * `onProgress` gets the fraction done (0..1) now and then. Decoding stops after `maxSeconds`
   * of audio, whatever the probe said. Answers whether the audio was copied.
   */
  transcode(
    input: string,
    output: string,
    opts: { loudnorm: boolean; probe: AudioProbe; maxSeconds: number; signal?: AbortSignal; onProgress?: (fraction: number) => void },
  ): Promise<{ copied: boolean }>;
}

/** ffmpeg and ffprobe to run: the configured ones, else the system's (on PATH). */
export interface Binaries {
  ffmpeg: string;
  ffprobe: string;
}

/**
 * The binaries: `FFMPEG_PATH`/`FFPROBE_PATH` when set, else the system's (Debian's package, in
 * /usr/bin, or wherever PATH finds them), as the configuration's `media` names them. No copy
 * ships with the project: an ffmpeg should get its security updates from the system's package
 * manager.
 */
export function findBinaries(where: Pick<MediaConfig, 'ffmpegPath' | 'ffprobePath' | 'searchPath'>): Partial<Binaries> {
  const { searchPath } = where;
  const dirs = ['/usr/bin', ...searchPath.split(path.delimiter).filter(Boolean)];
  const onPath = (name: string): string | undefined =>
    dirs.map((dir) => path.join(dir, name)).find((file) => {
      try {
        accessSync(file, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  return { ffmpeg: where.ffmpegPath ?? onPath('ffmpeg'), ffprobe: where.ffprobePath ?? onPath('ffprobe') };
}

/** The binaries, or an error that says how to get them. */
export function requireBinaries(found: Partial<Binaries>): Binaries {
  if (!found.ffmpeg || !found.ffprobe) {
    throw new Error('ffmpeg and ffprobe were not found: install ffmpeg (apt-get install ffmpeg) or set FFMPEG_PATH and FFPROBE_PATH');
  }
  return { ffmpeg: found.ffmpeg, ffprobe: found.ffprobe };
}

/** `ffmpeg -version`'s first line ("ffmpeg version 5.1.6-0+deb12u1 ..."), for the start-up log. */
export async function binaryVersion(binary: string): Promise<string> {
  const { code, stdout } = await run(binary, ['-hide_banner', '-version']);
  if (code !== 0) throw new Error(`${binary} -version exited with ${code}`);
  return stdout.split('\n')[0]?.trim() ?? '';
}

/**
 * `copyCompatible`: audio already in the players' form is copied (the default); false encodes
 * everything, as before (MEDIA_COPY_COMPATIBLE_AUDIO=false).
 */
export function createTranscoder(found: Partial<Binaries>, opts: { copyCompatible: boolean } = { copyCompatible: true }): Transcoder {
  const binary = (name: keyof Binaries): string => {
    const file = found[name];
    // Every job fails with this message (and the start-up log said so): not retried, the
    // operator has to install ffmpeg.
    if (!file) throw new TranscodeRefused(`the server cannot transcode: ${name} is not installed`);
    return file;
  };

  return {
    async probe(file) {
      const { code, stdout, stderr } = await run(binary('ffprobe'), [
        '-v', 'error', ...inputGuards(), '-print_format', 'json', '-show_format', '-show_streams', `file:${file}`,
      ]);
      if (code !== 0) {
        const reason = lastLine(stderr);
        throw new TranscodeRefused(
          /not on whitelist/i.test(stderr)
            ? 'the file is not in an accepted audio container (a playlist, a script or another format)'
            : `ffmpeg cannot read this file: ${reason || `exit code ${code}`}`,
        );
      }
      const parsed = JSON.parse(stdout) as {
        streams?: {
          codec_type?: string;
          codec_name?: string;
          profile?: string;
          channels?: number;
          sample_rate?: string;
          bit_rate?: string;
          duration?: string;
          disposition?: { attached_pic?: number };
          tags?: Record<string, string>;
        }[];
        format?: { format_name?: string; duration?: string; tags?: Record<string, string> };
      };
      const format = acceptedFormat(parsed.format?.format_name);
      if (!format) throw new TranscodeRefused(`the file is not in an accepted audio container (it is ${parsed.format?.format_name ?? 'unknown'})`);
      const streams = parsed.streams ?? [];
      const audioStreams = streams.filter((s) => s.codec_type === 'audio');
      const audio = audioStreams[0];
      if (!audio) throw new TranscodeRefused('the file has no audio stream');
      const duration = Number(parsed.format?.duration ?? audio.duration);
      const tags: Record<string, string> = {};
      for (const [k, v] of Object.entries({ ...audio.tags, ...parsed.format?.tags })) tags[k.toLowerCase()] = v;
      return {
        format,
        duration: Number.isFinite(duration) ? duration : 0,
        channels: audio.channels ?? 2,
        sampleRate: Number(audio.sample_rate) || 44100,
        codec: audio.codec_name ?? 'unknown',
        profile: audio.profile ?? '',
        bitrate: Number(audio.bit_rate) || 0,
        audioStreams: audioStreams.length,
        videoStreams: streams.filter((s) => s.codec_type === 'video' && s.disposition?.attached_pic !== 1).length,
        tags,
      };
    },

    async transcode(input, output, { loudnorm, probe, maxSeconds, signal, onProgress }) {
      const plan = transcodePlan(input, output, { loudnorm, probe, maxSeconds, global: ['-progress', 'pipe:1', '-nostats'], encode: !opts.copyCompatible });
      try {
        for (const [i, args] of plan.runs.entries()) {
          const { code, stderr } = await run(binary('ffmpeg'), args, {
            signal,
            onStdout: (text) => {
              // The first run is the long one (the encode, or the only copy); the copy of an encode's output is quick.
              const match = /out_time_(?:ms|us)=(\d+)/.exec(text);
              if (i === 0 && match && onProgress && probe.duration > 0) {
                onProgress(Math.min(1, Number(match[1]) / 1e6 / probe.duration));
              }
            },
          });
          if (signal?.aborted) throw new Error('transcoding stopped');
          if (code !== 0) throw new TranscodeRefused(`ffmpeg could not transcode this file: ${lastLine(stderr) || `exit code ${code}`}`);
        }
      } finally {
        await Promise.all(plan.scratch.map((file) => rm(file, { force: true })));
      }
      return { copied: plan.copied };
    },
  };
}

/**
 * Whether the source's audio is already what the players play, so that it is copied into a new
 * MP4 rather than decoded and encoded again (no generation loss, and a copy takes a fraction of
 * the time): an ISO media file (ffmpeg's `mov` demuxer: MP4, M4A, QuickTime, 3GP) whose one audio
 * stream is AAC-LC, mono or stereo, at a player's sample rate, at most 320 kbit/s, with no video
 * but cover art. HE-AAC (SBR, parametric stereo) is encoded again: the public documentation names
 * AAC and nothing says the players decode its extensions, while what the transcode makes (LC)
 * they do. Loudness normalisation needs the decoded audio, so it always encodes.
 */
export function keepsAudio(probe: AudioProbe, opts: { loudnorm: boolean }): boolean {
  return (
    !opts.loudnorm &&
    probe.format === 'mov' &&
    probe.codec === 'aac' &&
    probe.profile === 'LC' &&
    probe.audioStreams === 1 &&
    probe.videoStreams === 0 &&
    (probe.channels === 1 || probe.channels === 2) &&
    PLAYER_SAMPLE_RATES.includes(probe.sampleRate) &&
    probe.bitrate > 0 &&
    probe.bitrate <= MAX_KEPT_BITRATE
  );
}

/** What a transcode runs: ffmpeg's argument lists, in order, and the scratch files to remove after. */
export interface TranscodePlan {
  runs: string[][];
  scratch: string[];
  /** Whether the source's audio is copied as it is (`keepsAudio`), not encoded. */
  copied: boolean;
}

/**
 * The ffmpeg runs of a transcode (bench/media.ts runs ffmpeg alone with the same ones): a copy
 * of the audio stream when `keepsAudio`, else an encode to a scratch file and then that same
 * copy of it (`encode: true` forces the encode, for the benchmark's comparison). Every output
 * is thus a copy; and a copy of a copy is the same bytes, where an encode's own file is not
 * always (the MP4 writer keeps the encoder's full last frame, trimmed by the edit list, where
 * a copy writes the trimmed frame), so Cardshelf's output uploaded again keeps its hash.
 */
export function transcodePlan(
  input: string,
  output: string,
  opts: { loudnorm: boolean; probe: AudioProbe; maxSeconds?: number; global?: string[]; encode?: boolean },
): TranscodePlan {
  if (!opts.encode && keepsAudio(opts.probe, opts)) {
    return { runs: [copyArgs(input, output, { ...opts, format: opts.probe.format })], scratch: [], copied: true };
  }
  const encoded = `${output}.encoded`;
  return {
    runs: [encodeArgs(input, encoded, opts), copyArgs(encoded, output, { format: 'mov' })],
    scratch: [encoded],
    copied: false,
  };
}

/** Decodes `input` (the container `probe` found) and encodes it to what the players play. */
function encodeArgs(input: string, output: string, opts: { loudnorm: boolean; probe: AudioProbe; maxSeconds?: number; global?: string[] }): string[] {
  const rate = PLAYER_SAMPLE_RATES.includes(opts.probe.sampleRate) ? opts.probe.sampleRate : 44100;
  return [
    ...inputArgs(input, { ...opts, format: opts.probe.format }),
    '-ac', opts.probe.channels === 1 ? '1' : '2',
    ...(opts.loudnorm ? ['-af', LOUDNORM] : []),
    '-ar', String(rate),
    '-c:a', 'aac', '-b:a', BITRATE,
    ...outputArgs(output),
  ];
}

/**
 * Copies the first audio stream of `input` into a new MP4, as it is. The MP4 writer states
 * max(nominal rate, average) as the stream's maximum rate (esds, btrt): an encode's nominal
 * rate is 128k, a copy's its average, so naming 128k here too makes a copy of Cardshelf's own
 * output the same bytes.
 */
function copyArgs(input: string, output: string, opts: { format: string; maxSeconds?: number; global?: string[] }): string[] {
  return [...inputArgs(input, opts), '-c:a', 'copy', '-b:a', BITRATE, ...outputArgs(output)];
}

function inputArgs(input: string, opts: { format: string; maxSeconds?: number; global?: string[] }): string[] {
  return [
    '-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...(opts.global ?? []),
    // The container the probe found, forced: ffmpeg does not guess again (and cannot guess otherwise).
    ...inputGuards(), '-f', opts.format,
    ...(opts.maxSeconds !== undefined ? ['-t', String(opts.maxSeconds)] : []),
    '-i', `file:${input}`,
    '-map', '0:a:0', '-vn', '-sn', '-dn',
  ];
}

function outputArgs(output: string): string[] {
  return [
    // The same source gives the same bytes, so the same transcoded hash; nothing but the audio
    // (no tags, no chapter list).
    '-map_metadata', '-1', '-map_chapters', '-1', '-fflags', '+bitexact', '-flags:a', '+bitexact',
    '-movflags', '+faststart', '-f', 'mp4',
    output,
  ];
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.trim().slice(0, 300) ?? '';
}

function run(
  command: string,
  args: string[],
  opts: { signal?: AbortSignal; onStdout?: (text: string) => void } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], signal: opts.signal });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      if (opts.onStdout) opts.onStdout(text);
      else stdout += text;
    });
    // Only the end of stderr is kept: it names the error.
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-4000);
    });
    child.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code === 'ABORT_ERR') resolve({ code: null, stdout, stderr });
      else reject(err);
    });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
