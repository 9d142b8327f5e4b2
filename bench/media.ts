/**
 * `npm run bench:media`: the media pipeline, measured (issue 14).
 *   1. Signed GETs of a ~5 MB transcoded track, whole and as 64 KiB ranges, from `cardshelf
 *      serve`, against the ceiling: a bare node:http child streaming the same file from disk
 *      (bench/file-ceiling-server.ts) under the same load. Target: >= 70% of its requests/s.
 *   2. Transcoding a 10-minute file through Cardshelf (from the end of the PUT to the answer
 *      with transcodedSha256, polled every 50 ms) against ffmpeg run alone on it with the same
 *      arguments. Target: <= 1.1x.
 * SQLite and the file system; the machine is shared: compare ratios within one run.
 * Options: --duration S (default 10), --connections N (default 8), --no-record.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import autocannon from 'autocannon';
import { loadOrCreateSigningKey, mintToken } from '../src/auth/local-issuer.js';
import { loadConfig } from '../src/config.js';
import { createTranscoder, findBinaries, requireBinaries, transcodePlan } from '../src/modules/media/transcoder.js';
import { rootDir } from './paths.js';
import { RESULTS_MD, writeResultsJson } from './report.js';
import { freePort } from './server.js';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '8' },
    'no-record': { type: 'boolean', default: false },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const binaries = requireBinaries(findBinaries(loadConfig().media));
const { ffmpeg } = binaries;

async function tone(seconds: number, file: string): Promise<void> {
  await run(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`,
    '-f', 'lavfi', '-i', `anoisesrc=d=${seconds}:a=0.05`, '-filter_complex', 'amix=inputs=2', '-ac', '2', '-c:a', 'libmp3lame', '-b:a', '192k', file]);
}

function child(command: string, args: string[], env: Record<string, string>): { proc: ChildProcess; firstLine: Promise<string>; output: () => string } {
  const proc = spawn(command, args, { cwd: rootDir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const firstLine = new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', () => {
      const m = /Server listening at http:\/\/127\.0\.0\.1:(\d+)|^(\d+)\n/m.exec(out);
      if (m) resolve(m[1] ?? m[2]!);
    });
    proc.on('exit', (code) => reject(new Error(`${command} exited (${code}):\n${out}`)));
  });
  return { proc, firstLine, output: () => out };
}

async function load(url: string, headers: Record<string, string> = {}): Promise<{ rps: number; mbps: number; errors: number }> {
  const result = await autocannon({ url, connections, duration, headers });
  return {
    rps: Math.round(result.requests.average),
    mbps: Math.round((result.throughput.average / 1e6) * 10) / 10,
    errors: result.errors + result.non2xx,
  };
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'cardshelf-bench-media-'));
const procs: ChildProcess[] = [];
try {
  const env = { DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: '0' };
  // The server's own address must be known for the URLs it hands out: pick a port first.
  const port = String(await freePort());
  const base = `http://127.0.0.1:${port}`;
  const server = child(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], { ...env, PORT: port, PUBLIC_BASE_URL: base, LOG_LEVEL: 'info' });
  procs.push(server.proc);
  await server.firstLine;

  const config = loadConfig(env);
  if (config.auth.mode !== 'local') throw new Error('local issuer expected');
  const key = await loadOrCreateSigningKey(config.auth.keyFile);
  const token = await mintToken(key, { sub: 'auth0|bench', scope: 'user:content:manage', expiresIn: '1h', issuer: config.auth.issuer, audience: config.auth.audience });
  /** The JSON of an API answer, taken to have the shape `T` the caller reads. */
  const api = async <T>(p: string, init: RequestInit = {}): Promise<T> =>
    (await (await fetch(`${base}${p}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) } })).json()) as T;

  /** Uploads a file, waits for its transcode: the transcode and the wall time from PUT's end. */
  async function transcodeThrough(file: string): Promise<{ sha: string; seconds: number }> {
    const bytes = await readFile(file);
    const { upload } = await api<{ upload: { uploadUrl: string; uploadId: string } }>('/media/transcode/audio/uploadUrl');
    const put = await fetch(upload.uploadUrl, { method: 'PUT', body: bytes, headers: { 'content-type': 'audio/mpeg' } });
    if (put.status !== 200) throw new Error(`PUT ${put.status}: ${await put.text()}`);
    const t0 = performance.now();
    for (;;) {
      const { transcode } = await api<{ transcode: { transcodedSha256?: string } }>(`/media/upload/${upload.uploadId}/transcoded`);
      if (transcode.transcodedSha256) return { sha: transcode.transcodedSha256, seconds: (performance.now() - t0) / 1000 };
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  // 1. Signed GETs of a ~5 MB track.
  const fiveMinutes = path.join(dir, 'five.mp3');
  await tone(300, fiveMinutes);
  const track = await transcodeThrough(fiveMinutes);
  const card = await api<{ card: { cardId: string } }>('/content', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'bench', content: { chapters: [{ key: '01', tracks: [{ key: '01', type: 'audio', trackUrl: `service:#${track.sha}` }] }] } }),
  });
  const read = await api<{ card: { content: { chapters: { tracks: { trackUrl: string }[] }[] } } }>(
    `/content/${card.card.cardId}?playable=true`,
  );
  const signed = read.card.content.chapters[0]?.tracks[0]?.trackUrl;
  if (!signed) throw new Error('the card read back has no track');
  const trackFile = path.join(config.media.dir, 'objects', track.sha.slice(0, 2), track.sha);
  const size = (await readFile(trackFile)).length;
  const ceiling = child(process.execPath, ['--import', 'tsx', 'bench/file-ceiling-server.ts'], { FILE: trackFile, PORT: '0' });
  procs.push(ceiling.proc);
  const ceilingUrl = `http://127.0.0.1:${await ceiling.firstLine}/`;
  const range = { range: 'bytes=1048576-1114111' };
  const rows: string[] = [];
  for (const [name, headers] of [[`whole track (${(size / 1e6).toFixed(1)} MB)`, {}], ['64 KiB range', range]] as const) {
    const c = await load(ceilingUrl, headers);
    const m = await load(signed, headers);
    const ratio = Math.round((m.rps / Math.max(1, c.rps)) * 100);
    rows.push(`| ${name} | ${m.rps} req/s (${m.mbps} MB/s) | ${c.rps} req/s (${c.mbps} MB/s) | ${ratio}% | ${m.errors + c.errors} |`);
    console.log(rows.at(-1));
  }

  // 2. Transcoding a 10-minute file: through Cardshelf, then ffmpeg alone with the same arguments.
  const tenMinutes = path.join(dir, 'ten.mp3');
  await tone(600, tenMinutes);
  // Alternating runs, the best of three each: the machine is shared, and the least disturbed
  // run of each is the fairest comparison.
  const transcoder = createTranscoder(binaries);
  const probe = await transcoder.probe(tenMinutes);
  let best = { through: Infinity, alone: Infinity, sha: '' };
  let alone1 = '';
  for (let i = 0; i < 3; i++) {
    const copy = path.join(dir, `ten-${i}.mp3`);
    // A new source each time (one byte of tag differs), so that Cardshelf transcodes it again.
    await run(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-y', '-i', tenMinutes, '-c', 'copy', '-metadata', `comment=run ${i}`, copy]);
    const through = await transcodeThrough(copy);
    const out = path.join(dir, `alone-${i}.m4a`);
    const t0 = performance.now();
    const plan = transcodePlan(copy, out, { loudnorm: false, probe, maxSeconds: 18_000 }); // the default MEDIA_MAX_TRACK_SECONDS
    for (const args of plan.runs) await run(ffmpeg, args);
    const alone = (performance.now() - t0) / 1000;
    best = { through: Math.min(best.through, through.seconds), alone: Math.min(best.alone, alone), sha: through.sha };
    alone1 = out;
  }
  const same = createHash('sha256').update(await readFile(alone1)).digest('hex') === best.sha;
  const transcodeRow = `| transcode 10 min (best of 3) | ${best.through.toFixed(2)} s | ffmpeg alone ${best.alone.toFixed(2)} s | ${(best.through / best.alone).toFixed(2)}x | same bytes: ${same} |`;
  console.log(transcodeRow);

  if (!values['no-record']) {
    const startedAt = new Date();
    const when = startedAt.toISOString();
    await appendFile(
      RESULTS_MD,
      `\n### Media run ${when} (sqlite, file system, ${connections} connections, ${duration} s, ${os.cpus().length} cores, shared)\n\n` +
        `| scenario | Cardshelf | ceiling | ratio | errors |\n|---|---|---|---|---|\n${rows.join('\n')}\n${transcodeRow}\n`,
    );
    await writeResultsJson(startedAt, 'media', { when, rows, transcodeRow });
  }
} finally {
  for (const p of procs) p.kill('SIGTERM');
  await rm(dir, { recursive: true, force: true });
}
