/**
 * `npx tsx bench/links-copy.ts`: the time and bytes of bringing a 60-minute card home from a
 * linked Cardshelf and sending it out to another (issue 34, "Done when"), with the copy of audio
 * already in the players' form (the default) and with every upload encoded
 * (MEDIA_COPY_COMPATIBLE_AUDIO=false), in one run.
 *
 * Five servers in this process, each on its own SQLite database and a loopback port: the remote,
 * holding a card of 10 tracks of 6 minutes (AAC-LC 128 kbit/s in MP4, a tone and noise each, so
 * no two alike); two homes (copy on, copy off) that pull it; two targets (copy on, off) that each
 * home pushes it to. The links are made in the database with a token of the remote's issuer (the
 * sign-in is not what is measured). Each pull and push is timed from its POST to its job's
 * `done`, the wall time a member waits; bytes are the job's own count. The machine is shared:
 * compare within one run. Options: --tracks N (10), --minutes M (6), --no-record.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import { appendFile } from 'node:fs/promises';
import { buildApp } from '../src/app.js';
import { loadOrCreateSigningKey, mintToken } from '../src/auth/local-issuer.js';
import { loadConfig, type Config } from '../src/config.js';
import type { App } from '../src/http/route-app.js';
import { openStore } from '../src/db/store.js';
import { createSecretBox } from '../src/modules/links/secret-box.js';
import { findBinaries, requireBinaries } from '../src/modules/media/transcoder.js';
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
const SECRET = 'bench-links-copy-secret-0123456789';
const SCOPE = 'user:content:manage family:library:manage';

interface Server {
  app: App;
  config: Readonly<Config>;
  base: string;
  token(sub: string): Promise<string>;
  call<T>(method: string, url: string, token: string, body?: unknown): Promise<{ status: number; body: T }>;
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startServer(dir: string, name: string, env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const config = loadConfig({ DATA_DIR: path.join(dir, name), LOG_LEVEL: 'warn', PUBLIC_BASE_URL: base, MEDIA_URL_SECRET: SECRET, ...env });
  const app = await buildApp(config);
  await app.listen({ port, host: '127.0.0.1' });
  if (config.auth.mode !== 'local') throw new Error('the benchmark needs the local issuer');
  const auth = config.auth;
  return {
    app,
    config,
    base,
    async token(sub) {
      return mintToken(await loadOrCreateSigningKey(auth.keyFile), { sub, scope: SCOPE, expiresIn: '4h', issuer: auth.issuer, audience: auth.audience });
    },
    async call<T>(method: string, url: string, token: string, body?: unknown) {
      const r = await app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        payload: body !== undefined ? JSON.stringify(body) : undefined,
      });
      return { status: r.statusCode, body: JSON.parse(r.body || 'null') as T };
    },
  };
}

/** A link of `home`'s member to `remote`'s member, as the sign-in would leave it. */
async function linkIn(home: Server, member: string, remote: Server, remoteMember: string): Promise<string> {
  const store = openStore(home.config.database);
  const linkId = `bench-${Math.random().toString(36).slice(2)}`;
  const box = createSecretBox(SECRET);
  const at = new Date().toISOString();
  try {
    await store.db
      .insertInto('links')
      .values({
        link_id: linkId, user_id: member, name: 'Remote', api_base_url: remote.base, auth_base_url: remote.base, client_id: 'bench', audience: null,
        state: 'linked', reason: null, user_code: null, verification_uri: null, verification_uri_complete: null, expires_at: null,
        device_code_sealed: null, poll_interval: 5, next_poll_at: null,
        refresh_token_sealed: box.seal('not used: the access token outlasts the run', linkId),
        access_token_sealed: box.seal(await remote.token(remoteMember), linkId),
        access_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        created_at: at, updated_at: at,
      })
      .execute();
  } finally {
    await store.db.destroy();
  }
  return linkId;
}

interface JobAnswer {
  job: { jobId: string; state: string; cards: { state: string; cardId: string }[]; bytes: number; files: { done: number } };
}

/** POSTs a pull or push and waits for its job: wall seconds, bytes and files of the job. */
async function timeJob(home: Server, token: string, linkId: string, kind: 'pull' | 'push', body: unknown): Promise<{ seconds: number; bytes: number; files: number; cards: JobAnswer['job']['cards'] }> {
  const t0 = performance.now();
  const started = await home.call<JobAnswer>('POST', `/user/links/${linkId}/${kind}`, token, body);
  if (started.status !== 202) throw new Error(`${kind}: ${JSON.stringify(started.body)}`);
  for (;;) {
    const { job } = (await home.call<JobAnswer>('GET', `/user/links/${linkId}/jobs/${started.body.job.jobId}`, token)).body;
    if (job.state === 'done' || job.state === 'failed') {
      if (job.state === 'failed' || job.cards.some((c) => c.state !== 'copied')) throw new Error(`${kind}: ${JSON.stringify(job)}`);
      return { seconds: (performance.now() - t0) / 1000, bytes: job.bytes, files: job.files.done, cards: job.cards };
    }
    await sleep(100);
  }
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'cardshelf-links-bench-'));
const servers: Server[] = [];
try {
  const remote = await startServer(dir, 'remote', {});
  servers.push(remote);
  const remoteToken = await remote.token('bench-remote-member');
  console.log(`making ${tracks} tracks of ${seconds / 60} minutes, AAC-LC 128 kbit/s in MP4, on the remote ...`);
  const chapterTracks = [];
  let sourceBytes = 0;
  for (let i = 0; i < tracks; i++) {
    const file = path.join(dir, `track-${i}.m4a`);
    await run(binaries.ffmpeg, [
      '-hide_banner', '-loglevel', 'error', '-y',
      '-f', 'lavfi', '-i', `sine=frequency=${220 + 55 * i}:duration=${seconds}`, '-f', 'lavfi', '-i', `anoisesrc=d=${seconds}:a=0.05:seed=${i + 1}`,
      '-filter_complex', 'amix=inputs=2', '-ac', '2', '-ar', '44100', '-c:a', 'aac', '-b:a', '128k', '-f', 'mp4', file,
    ]);
    const bytes = await readFile(file);
    sourceBytes += bytes.length;
    const asked = await remote.call<{ upload: { uploadId: string; uploadUrl: string } }>('GET', '/media/transcode/audio/uploadUrl', remoteToken);
    const url = new URL(asked.body.upload.uploadUrl);
    const put = await remote.app.inject({ method: 'PUT', url: `${url.pathname}${url.search}`, payload: bytes, headers: { 'content-type': 'audio/mp4' } });
    if (put.statusCode !== 200) throw new Error(put.body);
    let sha: string | undefined;
    while (!sha) {
      const polled = await remote.call<{ transcode: { transcodedSha256?: string } }>('GET', `/media/upload/${asked.body.upload.uploadId}/transcoded`, remoteToken);
      sha = polled.body.transcode.transcodedSha256;
      if (!sha) await sleep(100);
    }
    chapterTracks.push({ key: String(i + 1).padStart(2, '0'), title: `Track ${i + 1}`, trackUrl: `yoto:#${sha}`, type: 'audio', format: 'aac' });
  }
  const made = await remote.call<{ card: { cardId: string } }>('POST', '/content', remoteToken, { title: `A ${(tracks * seconds) / 60}-minute card`, content: { chapters: [{ key: '01', title: 'All', tracks: chapterTracks }] } });
  const remoteCardId = made.body.card.cardId;

  const results: Record<string, { pull: Awaited<ReturnType<typeof timeJob>>; push: Awaited<ReturnType<typeof timeJob>> }> = {};
  for (const copy of ['true', 'false']) {
    const home = await startServer(dir, `home-${copy}`, { MEDIA_COPY_COMPATIBLE_AUDIO: copy });
    const target = await startServer(dir, `target-${copy}`, { MEDIA_COPY_COMPATIBLE_AUDIO: copy });
    servers.push(home, target);
    const member = `bench-home-${copy}`;
    const token = await home.token(member);
    const pull = await timeJob(home, token, await linkIn(home, member, remote, 'bench-remote-member'), 'pull', { cardIds: [remoteCardId] });
    const localCardId = pull.cards[0]!.cardId;
    const push = await timeJob(home, token, await linkIn(home, member, target, 'bench-target-member'), 'push', { cardIds: [localCardId] });
    results[copy === 'true' ? 'copied' : 'encoded'] = { pull, push };
    console.log(`${copy === 'true' ? 'copied ' : 'encoded'}: pull ${pull.seconds.toFixed(2)} s ${pull.bytes} bytes; push ${push.seconds.toFixed(2)} s ${push.bytes} bytes`);
  }

  const mb = (bytes: number): string => (bytes / 1e6).toFixed(2);
  const row = (name: string, r: (typeof results)[string]): string =>
    `| ${name} | ${r.pull.seconds.toFixed(2)} s | ${mb(r.pull.bytes)} MB | ${r.push.seconds.toFixed(2)} s | ${mb(r.push.bytes)} MB |`;
  const rows = [row('audio copied (default)', results.copied!), row('every upload encoded (`MEDIA_COPY_COMPATIBLE_AUDIO=false`)', results.encoded!)];
  const ratio = `encoded / copied: pull ${(results.encoded!.pull.seconds / results.copied!.pull.seconds).toFixed(1)}x, push ${(results.encoded!.push.seconds / results.copied!.push.seconds).toFixed(1)}x`;
  console.log([...rows, ratio].join('\n'));
  if (!values['no-record']) {
    const startedAt = new Date();
    const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
    await appendFile(
      RESULTS_MD,
      `\n### Linked services: a ${(tracks * seconds) / 60}-minute card pulled and pushed, run ${startedAt.toISOString()} (issue 34; ${os.cpus().length} cores, shared, load ${load})\n\n` +
        `\`npx tsx bench/links-copy.ts\`: ${tracks} tracks of ${seconds / 60} minutes of AAC-LC 128 kbit/s in MP4 (${mb(sourceBytes)} MB) on a linked Cardshelf, ` +
        'pulled into another and pushed from it to a third (SQLite each, loopback), timed from the POST to the job done.\n\n' +
        `| mode | pull | pull bytes | push | push bytes |\n|---|---|---|---|---|\n${rows.join('\n')}\n\n${ratio}.\n`,
    );
    await writeResultsJson(startedAt, 'links-copy', { tracks, seconds, sourceBytes, results });
  }
} finally {
  for (const s of servers) await s.app.close();
  await rm(dir, { recursive: true, force: true });
}
