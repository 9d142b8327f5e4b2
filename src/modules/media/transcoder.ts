import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

/**
 * ffmpeg and ffprobe, run as child processes. Audio is transcoded to what the players play, as
 * the public service documents it: AAC at 128 kbit/s in an MP4 (M4A) container, at 11.025,
 * 22.05, 44.1 or 48 kHz, mono or stereo; `loudnorm` adds EBU R128 loudness normalisation.
 */

export const OUTPUT_CONTENT_TYPE = 'audio/mp4';
const PLAYER_SAMPLE_RATES = [11025, 22050, 44100, 48000];
const BITRATE = '128k';
/** EBU R128 targets for spoken word and music on small speakers (ffmpeg's loudnorm defaults, but -16 LUFS). */
const LOUDNORM = 'loudnorm=I=-16:TP=-1.5:LRA=11';

export interface AudioProbe {
  duration: number;
  channels: number;
  sampleRate: number;
  codec: string;
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

/** The input cannot be transcoded (not audio, damaged): a final failure, not worth a retry. */
export class UnreadableAudio extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableAudio';
  }
}

export interface Transcoder {
  probe(file: string): Promise<AudioProbe>;
  /** Transcodes `input` to `output`; `onProgress` gets the fraction done (0..1) now and then. */
  transcode(
    input: string,
    output: string,
    opts: { loudnorm: boolean; probe: AudioProbe; signal?: AbortSignal; onProgress?: (fraction: number) => void },
  ): Promise<void>;
}

/** The binaries npm installed with the project, unless the configuration names others. */
export function bundledBinaries(): { ffmpeg: string; ffprobe: string } {
  const require = createRequire(import.meta.url);
  return {
    ffmpeg: (require('@ffmpeg-installer/ffmpeg') as { path: string }).path,
    ffprobe: (require('@ffprobe-installer/ffprobe') as { path: string }).path,
  };
}

export function createTranscoder(paths: { ffmpeg?: string; ffprobe?: string } = {}): Transcoder {
  let bundled: { ffmpeg: string; ffprobe: string } | undefined;
  const binary = (name: 'ffmpeg' | 'ffprobe'): string => paths[name] ?? (bundled ??= bundledBinaries())[name];

  return {
    async probe(file) {
      const { code, stdout, stderr } = await run(binary('ffprobe'), [
        '-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file,
      ]);
      if (code !== 0) throw new UnreadableAudio(`ffmpeg cannot read this file: ${lastLine(stderr) || `exit code ${code}`}`);
      const parsed = JSON.parse(stdout) as {
        streams?: { codec_type?: string; codec_name?: string; channels?: number; sample_rate?: string; duration?: string; tags?: Record<string, string> }[];
        format?: { duration?: string; tags?: Record<string, string> };
      };
      const audio = parsed.streams?.find((s) => s.codec_type === 'audio');
      if (!audio) throw new UnreadableAudio('the file has no audio stream');
      const duration = Number(parsed.format?.duration ?? audio.duration);
      const tags: Record<string, string> = {};
      for (const [k, v] of Object.entries({ ...audio.tags, ...parsed.format?.tags })) tags[k.toLowerCase()] = v;
      return {
        duration: Number.isFinite(duration) ? duration : 0,
        channels: audio.channels ?? 2,
        sampleRate: Number(audio.sample_rate) || 44100,
        codec: audio.codec_name ?? 'unknown',
        tags,
      };
    },

    async transcode(input, output, { loudnorm, probe, signal, onProgress }) {
      const args = transcodeArgs(input, output, { loudnorm, probe, global: ['-progress', 'pipe:1', '-nostats'] });
      const { code, stderr } = await run(binary('ffmpeg'), args, {
        signal,
        onStdout: (text) => {
          const match = /out_time_(?:ms|us)=(\d+)/.exec(text);
          if (match && onProgress && probe.duration > 0) {
            onProgress(Math.min(1, Number(match[1]) / 1e6 / probe.duration));
          }
        },
      });
      if (signal?.aborted) throw new Error('transcoding stopped');
      if (code !== 0) throw new UnreadableAudio(`ffmpeg could not transcode this file: ${lastLine(stderr) || `exit code ${code}`}`);
    },
  };
}

/** ffmpeg's arguments for a transcode (bench/media.ts runs ffmpeg alone with the same ones). */
export function transcodeArgs(
  input: string,
  output: string,
  opts: { loudnorm: boolean; probe: AudioProbe; global?: string[] },
): string[] {
  const rate = PLAYER_SAMPLE_RATES.includes(opts.probe.sampleRate) ? opts.probe.sampleRate : 44100;
  return [
    '-nostdin', '-hide_banner', '-loglevel', 'error', '-y', ...(opts.global ?? []),
    '-i', input,
    '-map', '0:a:0', '-vn', '-sn', '-dn',
    '-ac', opts.probe.channels === 1 ? '1' : '2',
    ...(opts.loudnorm ? ['-af', LOUDNORM] : []),
    '-ar', String(rate),
    '-c:a', 'aac', '-b:a', BITRATE,
    // The same source gives the same bytes, so the same transcoded hash.
    '-map_metadata', '-1', '-fflags', '+bitexact', '-flags:a', '+bitexact',
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
