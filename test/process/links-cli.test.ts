import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { App } from '../../src/http/route-app.js';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { decideAtRemote, makeCard, startRemote, waitFor, type Remote } from '../support/linked-remote.js';
import { local } from '../support/media.js';
import { cli } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

/**
 * `cardshelf link list|pull|push` (issue 34, the CLI for operators), against a second Cardshelf
 * playing the remote. The member links through this instance's HTTP API (an app on the
 * deployment's database and DATA_DIR, closed again); the commands then run with no server, so
 * a job they follow is one they ran themselves.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ME = 'auth0|link-cli-member';
const OTHER = 'auth0|link-cli-other';

/** The command on a terminal: `script` gives it a pseudo-terminal; answers what the terminal showed. */
function onTerminal(args: string[], env: Record<string, string>, columns: number): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, '--import', 'tsx', path.join(ROOT, 'src/main.ts'), ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', `stty cols ${columns}; exec ${command}`, '/dev/null'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let screen = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (screen += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (screen += c));
    child.once('error', reject);
    // 'close', not 'exit': the output is all read by then.
    child.once('close', (code) => resolve({ code, screen }));
  });
}

interface Local {
  call(method: string, url: string, token: string, body?: unknown): Promise<{ status: number; body: any }>;
  app: App;
  close(): Promise<void>;
}

/** This instance as a server would run it (its sign-in poller and job runner included), on the deployment. */
async function startLocal(deployment: Deployment): Promise<Local> {
  const app = await buildApp(loadConfig({ ...deployment.env, LOG_LEVEL: 'silent' }));
  await app.ready();
  return {
    app,
    async call(method, url, token, body) {
      const r = await app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      return { status: r.statusCode, body: r.body === '' ? undefined : r.json() };
    },
    close: () => app.close(),
  };
}

describe(`cardshelf link on ${testDialect()}`, { timeout: 300_000 }, () => {
  let deployment: Deployment;
  let remote: Remote;
  let env: Record<string, string>;
  let token: string;
  let linkId: string;
  let bedtime: string;
  let songs: string;
  let broken: string;
  let otherCard: string;

  beforeAll(async () => {
    deployment = await createDeployment();
    env = { ...deployment.env, LOG_LEVEL: 'silent' };
    token = await deployment.token(ME);
    remote = await startRemote();
    const remoteToken = await remote.token();
    bedtime = (await makeCard(remote.t, remoteToken, 'Bedtime', 1, 2, 300)).cardId;
    songs = (await makeCard(remote.t, remoteToken, 'Songs', 1, 1, 500)).cardId;
    // Audio the remote does not hold: it gives no way to fetch it, so that card fails.
    const missing = { key: '01', title: 'Lost', type: 'audio', format: 'aac', trackUrl: `yoto:#${'ab'.repeat(32)}` };
    const made = await remote.t.call('POST', '/content', { token: remoteToken, body: { title: 'Broken', content: { chapters: [{ key: '01', title: 'One', tracks: [missing] }] } } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    broken = made.body.card.cardId as string;

    const here = await startLocal(deployment);
    try {
      const linked = await here.call('POST', '/user/links', token, { name: 'Other shelf', apiBaseUrl: remote.base, authBaseUrl: remote.base, clientId: 'cardshelf-link-cli-test' });
      expect(linked.status, JSON.stringify(linked.body)).toBe(201);
      linkId = linked.body.link.linkId as string;
      await decideAtRemote(remote, linked.body.link.userCode as string, 'approve');
      const read = async () => ({ ...(await here.call('GET', `/user/links/${linkId}`, token)), headers: {}, raw: undefined as never });
      const settled = await waitFor(read, (r) => r.body.link.state !== 'signing-in');
      expect(settled.body.link.state).toBe('linked');
      const made = await here.call('POST', '/content', await deployment.token(OTHER), { title: 'Not yours' });
      expect(made.status).toBe(201);
      otherCard = made.body.card.cardId as string;
    } finally {
      await here.close();
    }
  });
  afterAll(async () => {
    await remote?.t.close();
    await deployment?.close();
  });

  /**
   * Every job of the deployment, read from its database: a refused command must add none (and
   * this costs no process of its own, as `link list` would).
   */
  const jobIds = async (): Promise<string[]> =>
    (await deployment.store().db.selectFrom('link_jobs').select('job_id').orderBy('job_id').execute()).map((j) => j.job_id);

  it("lists the member's links as a table and as JSON; another member has none", async () => {
    // Three reads, nothing written: run side by side.
    const [text, json, other] = await Promise.all([
      cli(['link', 'list', '--user', ME], env),
      cli(['link', 'list', '--user', ME, '--json'], env),
      cli(['link', 'list', '--user', OTHER], env),
    ]);
    expect(text.code, text.stderr).toBe(0);
    const [header, row] = text.stdout.trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['LINK', 'NAME', 'STATE', 'API']);
    expect(row!.split(/\s{2,}/)).toEqual([linkId, 'Other shelf', 'linked', remote.base]);

    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      links: [expect.objectContaining({ linkId, name: 'Other shelf', state: 'linked', apiBaseUrl: remote.base, jobs: [] })],
    });

    expect(other).toMatchObject({ code: 0, stdout: '' });
    expect(other.stderr).toContain(`${OTHER} has no links`);
  });

  it('pulls the cards named, running the job itself (no server): a progress line per change, each card\'s outcome, exit 0', async () => {
    const r = await cli(['link', 'pull', '--user', ME, '--link', linkId, '--card', bedtime, '--card', songs], env);
    expect(r.code, r.stderr).toBe(0);
    const progress = r.stderr.split('\n').filter((line) => line.startsWith('pull '));
    expect(progress.length).toBeGreaterThanOrEqual(3);
    for (const line of progress) expect(line).toMatch(/^pull [\w-]+: (queued|running|done), \d+\/\d+ files, [\d.]+ \w+, \d+\/\d+ cards$/);
    expect(progress.at(-1)).toMatch(/: done, 7\/7 files, [\d.]+ kB, 2\/2 cards$/); // 3 tracks, an icon and a cover a card
    const outcomes = r.stdout.trim().split('\n').map((line) => line.split('\t'));
    expect(outcomes.map(([state, , remoteId, title]) => [state, remoteId, title])).toEqual([
      ['copied', bedtime, 'Bedtime'],
      ['copied', songs, 'Songs'],
    ]);
    expect(r.stderr).toMatch(/: done in [\d.]+ s: 2 copied; 7 files/);

    // The cards are the member's here, playable.
    const here = await startLocal(deployment);
    try {
      const mine = await here.call('GET', '/content/mine', token);
      expect(mine.body.cards.map((c: any) => c.title).sort()).toEqual(['Bedtime', 'Songs']);
      const card = (await here.call('GET', `/content/${outcomes[0]![1]!}?playable=true`, token)).body.card;
      expect(card.content.chapters[0].tracks).toHaveLength(2);
      const played = await here.app.inject({ method: 'GET', url: local(card.content.chapters[0].tracks[0].trackUrl as string), headers: { range: 'bytes=0-99' } });
      expect(played.statusCode).toBe(206);
    } finally {
      await here.close();
    }

    // The job, in the list.
    const [json, table] = await Promise.all([cli(['link', 'list', '--user', ME, '--json'], env), cli(['link', 'list', '--user', ME], env)]);
    const listed = JSON.parse(json.stdout);
    expect(listed.links[0].jobs).toEqual([expect.objectContaining({ kind: 'pull', state: 'done', files: { done: 7, total: 7 } })]);
    const jobId = listed.links[0].jobs[0].jobId as string;
    const text = table.stdout;
    expect(text).toContain(`jobs of ${linkId} (Other shelf), newest first:`);
    expect(text).toMatch(new RegExp(`^${jobId}\\s+pull\\s+done\\s+2\\s+7/7\\s+[\\d.]+ kB\\s+\\S+$`, 'm'));
  });

  it('shows a bar on a terminal, rewritten in place', async () => {
    const r = await onTerminal(['link', 'pull', '--user', ME, '--link', linkId, '--card', songs], env, 150);
    expect(r.code, r.screen).toBe(0);
    // Each drawing starts at the first column and clears what a longer one left.
    const drawn = [...r.screen.matchAll(/\x1b\[1G(.*?)\x1b\[0K/g)].map((m) => m[1]);
    expect(drawn.at(-1)).toMatch(/^\[#{24}\] pull [\w-]+: done, 0\/0 files, 0 byte, 1\/1 cards$/);
    expect(r.screen).not.toMatch(/^pull /m);
    expect(r.screen).toMatch(/unchanged\t\S+\t[\w-]+\tSongs/);
  });

  it.each([
    ['a link that is not there', ['pull', '--user', ME, '--link', 'no-such-link'], /link no-such-link not found/],
    ["another member's link", ['pull', '--user', OTHER, '--link', '<link>'], /link \S+ not found/],
    ['a card not the member\'s', ['push', '--user', ME, '--link', '<link>', '--card', '<other-card>'], /only your own MYO cards can be sent; not: \S+/],
    ['a push naming no card', ['push', '--user', ME, '--link', '<link>'], /required option '--card <cardId>'/],
    ['a card named twice', ['pull', '--user', ME, '--link', '<link>', '--card', 'a', '--card', 'a'], /--card: .*unique/],
  ])('refuses %s with exit 2, queueing nothing', async (_case, args, message) => {
    const before = await jobIds();
    const r = await cli(['link', ...args.map((a) => a.replace('<link>', linkId).replace('<other-card>', otherCard))], env);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
    expect(await jobIds()).toEqual(before);
  });

  it("exits 1 when a card fails, with that card's outcome and reason", async () => {
    const r = await cli(['link', 'pull', '--user', ME, '--link', linkId, '--card', broken, '--card', songs], env);
    expect(r.code, r.stderr).toBe(1);
    const outcomes = r.stdout.trim().split('\n').map((line) => line.split('\t'));
    expect(outcomes.map(([state, , remoteId]) => [state, remoteId])).toEqual([
      ['failed', broken],
      ['unchanged', songs],
    ]);
    expect(outcomes[0]![4]).toContain('ab'.repeat(32));
    expect(r.stderr).toMatch(/: done in [\d.]+ s: 1 failed, 1 unchanged/);
  });

  it('with --no-wait, queues the job, prints its id and leaves it to a running server; a command that waits runs its own job only', async () => {
    const r = await cli(['link', 'pull', '--user', ME, '--link', linkId, '--card', bedtime, '--no-wait'], env);
    expect(r.code, r.stderr).toBe(0);
    const jobId = r.stdout.trim();
    expect(r.stderr).toContain(`queued job ${jobId}; a running server runs it`);
    const jobs = async () => JSON.parse((await cli(['link', 'list', '--user', ME, '--json'], env)).stdout).links[0].jobs as any[];
    expect((await jobs())[0]).toMatchObject({ jobId, state: 'queued' });

    const waited = await cli(['link', 'pull', '--user', ME, '--link', linkId, '--card', songs], env);
    expect(waited.code, waited.stderr).toBe(0);
    expect(await deployment.store().db.selectFrom('link_jobs').select('state').where('job_id', '=', jobId).executeTakeFirst()).toEqual({ state: 'queued' });

    const here = await startLocal(deployment);
    try {
      const read = async () => ({ ...(await here.call('GET', `/user/links/${linkId}/jobs/${jobId}`, token)), headers: {}, raw: undefined as never });
      const done = await waitFor(read, (x) => ['done', 'failed'].includes(x.body.job.state));
      expect(done.body.job).toMatchObject({ state: 'done', cards: [expect.objectContaining({ remoteCardId: bedtime, state: 'unchanged' })] });
    } finally {
      await here.close();
    }
  });
});
