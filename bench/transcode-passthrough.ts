/**
 * `npx tsx bench/transcode-passthrough.ts`: what copying audio already in the players' form
 * saves (issue 34). A 60-minute card's worth of audio, 10 tracks of 6 minutes (a tone and
 * noise, each track its own), made as AAC-LC at 128 kbit/s in MP4, is transcoded track by track
 * as the worker does it (ffprobe, then ffmpeg's runs of `transcodePlan`): once as Cardshelf does now
 * (the audio copied), once with the encode forced (as before). Each mode's wall time (probe
 * and ffmpeg, tracks one after another) and bytes out; which mode runs first alternates by
 * track. Also checks that the copies keep the audio packets and that Cardshelf's own output
 * copied again is the same bytes. The machine is shared: compare the ratio within one run.
 * Options: --tracks N (10), --minutes M (6), --no-record.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { loadConfig } from '../src/config.js';
import { createTranscoder, findBinaries, keepsAudio, requireBinaries, transcodePlan } from '../src/modules/media/transcoder.js';
import { RESULTS_MD, writeResultsJson } from './report.js';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    tracks: { type: 'string', default: '10' },
    minutes: { type: 'string', default: '6' },
    'no-record': { type: 'boolean', default: false },
  },
});
const tracks = Number(values.tracks);
const seconds = Number(values.minutes) * 60;
const binaries = requireBinaries(findBinaries(loadConfig().media));
const transcoder = createTranscoder(binaries);
/** The default MEDIA_MAX_TRACK_SECONDS, as the worker passes it. */
const MAX_SECONDS = 18_000;

const sha256 = async (file: string): Promise<string> => createHash('sha256').update(await readFile(file)).digest('hex');
const audioPackets = async (file: string): Promise<string> =>
  (await run(binaries.ffmpeg, ['-hide_banner', '-loglevel', 'error', '-i', file, '-map', '0:a:0', '-c', 'copy', '-f', 'md5', '-'])).stdout.trim();

/** One worker job's ffmpeg work on `input`: the probe, then the transcode; its seconds and bytes out. */
async function transcode(input: string, output: string, encode: boolean): Promise<{ seconds: number; bytes: number }> {
  const t0 = performance.now();
  const probe = await transcoder.probe(input);
  const plan = transcodePlan(input, output, { loudnorm: false, probe, maxSeconds: MAX_SECONDS, encode });
  for (const args of plan.runs) await run(binaries.ffmpeg, args);
  await Promise.all(plan.scratch.map((file) => rm(file)));
  const took = (performance.now() - t0) / 1000;
  return { seconds: took, bytes: (await stat(output)).size };
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'cardshelf-passthrough-bench-'));
try {
  console.log(`making ${tracks} tracks of ${seconds / 60} minutes, AAC-LC 128 kbit/s in MP4 ...`);
  const sources: string[] = [];
  for (let i = 0; i < tracks; i++) {
    const file = path.join(dir, `track-${i}.m4a`);
    await run(binaries.ffmpeg, [
      '-hide_banner', '-loglevel', 'error', '-y',
      '-f', 'lavfi', '-i', `sine=frequency=${220 + 55 * i}:duration=${seconds}`, '-f', 'lavfi', '-i', `anoisesrc=d=${seconds}:a=0.05:seed=${i + 1}`,
      '-filter_complex', 'amix=inputs=2', '-ac', '2', '-ar', '44100', '-c:a', 'aac', '-b:a', '128k', '-metadata', `title=Track ${i + 1}`, '-f', 'mp4', file,
    ]);
    sources.push(file);
  }

  const copied = { seconds: 0, bytes: 0 };
  const encoded = { seconds: 0, bytes: 0 };
  let sourceBytes = 0;
  let packetsKept = true;
  for (const [i, source] of sources.entries()) {
    const probe = await transcoder.probe(source);
    if (!keepsAudio(probe, { loudnorm: false })) throw new Error(`track ${i} would be encoded: ${JSON.stringify(probe)}`);
    sourceBytes += (await stat(source)).size;
    const copyOut = path.join(dir, `copy-${i}.m4a`);
    const encodeOut = path.join(dir, `encode-${i}.m4a`);
    for (const encode of i % 2 === 0 ? [false, true] : [true, false]) {
      const r = await transcode(source, encode ? encodeOut : copyOut, encode);
      const into = encode ? encoded : copied;
      into.seconds += r.seconds;
      into.bytes += r.bytes;
      console.log(`track ${i + 1}: ${encode ? 'encode' : 'copy  '} ${r.seconds.toFixed(2)} s, ${r.bytes} bytes`);
    }
    packetsKept &&= (await audioPackets(copyOut)) === (await audioPackets(source));
  }

  // Cardshelf's own output (an encode), transcoded again: copied, to the same bytes.
  const again = path.join(dir, 'again.m4a');
  const { copied: wasCopied } = await transcoder.transcode(path.join(dir, 'encode-0.m4a'), again, {
    loudnorm: false, probe: await transcoder.probe(path.join(dir, 'encode-0.m4a')), maxSeconds: MAX_SECONDS,
  });
  const sameBytes = wasCopied && (await sha256(again)) === (await sha256(path.join(dir, 'encode-0.m4a')));

  const mb = (bytes: number): string => (bytes / 1e6).toFixed(2);
  const rows = [
    `| copied (this branch) | ${copied.seconds.toFixed(2)} s | ${mb(copied.bytes)} MB | ${(copied.bytes / sourceBytes).toFixed(3)} |`,
    `| encoded (forced, as before) | ${encoded.seconds.toFixed(2)} s | ${mb(encoded.bytes)} MB | ${(encoded.bytes / sourceBytes).toFixed(3)} |`,
  ];
  const ratio = `encode / copy wall time: ${(encoded.seconds / copied.seconds).toFixed(1)}x`;
  const checks = `copies kept every audio packet: ${packetsKept}; Cardshelf's own output transcoded again copied to the same bytes: ${sameBytes}`;
  console.log([...rows, ratio, checks].join('\n'));

  if (!values['no-record']) {
    const startedAt = new Date();
    const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
    await appendFile(
      RESULTS_MD,
      `\n### Transcode pass-through run ${startedAt.toISOString()} (issue 34; ${tracks} tracks x ${seconds / 60} min, ${os.cpus().length} cores, shared, load ${load})\n\n` +
        `\`npx tsx bench/transcode-passthrough.ts\`: ${tracks * (seconds / 60)} minutes of AAC-LC 128 kbit/s in MP4 ` +
        `(${mb(sourceBytes)} MB), each track probed and transcoded as the worker does, one after another.\n\n` +
        `| mode | wall time (probe + ffmpeg) | bytes out | out / in |\n|---|---|---|---|\n${rows.join('\n')}\n\n${ratio}. ${checks}.\n`,
    );
    await writeResultsJson(startedAt, 'transcode-passthrough', { tracks, seconds, sourceBytes, copied, encoded, packetsKept, sameBytes });
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
