import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { startFakeRemote, sha256Hex, type FakeCard, type FakeRemote } from '../support/fake-remote.js';
import { makeAudio } from '../support/media.js';
import { http, startServer, type HttpReply, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

/**
 * Jobs that survive (issue 34): real `cardshelf serve` processes on one database (a SQLite file
 * in a shared data directory, or PostgreSQL) pulling from a fake remote whose media answers
 * slowly, so that a kill lands in the middle of a job. A lease of 2 seconds lets the next
 * instance take the job over soon.
 */
describe(`linked-service jobs across restarts and instances, on ${testDialect()}`, { timeout: 240_000 }, () => {
  let deployment: Deployment;
  let fake: FakeRemote;
  let env: Record<string, string>;
  const servers: ServerProcess[] = [];
  let cards: FakeCard[] = [];

  beforeAll(async () => {
    deployment = await createDeployment();
    env = { ...deployment.env, LINK_JOB_LEASE_SECONDS: '2', LINK_FILES_PER_JOB: '1', LINK_JOBS_PER_INSTANCE: '1' };
    fake = await startFakeRemote();
    for (let i = 0; i < 6; i++) {
      const bytes = await makeAudio(1, { hz: 300 + i * 97 });
      cards.push(fake.addCard(`Card ${i + 1}`, sha256Hex(bytes), fake.serve(`a${i}`, bytes)));
    }
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL', 0)));
    await fake?.close();
    await deployment?.close();
  });

  async function serve(): Promise<ServerProcess> {
    const server = await startServer(env);
    servers.push(server);
    return server;
  }

  async function until(read: () => Promise<HttpReply>, done: (r: HttpReply) => boolean, ms: number): Promise<HttpReply> {
    const deadline = Date.now() + ms;
    for (;;) {
      const r = await read();
      if (done(r)) return r;
      if (Date.now() > deadline) throw new Error(`still waiting: ${JSON.stringify(r.body).slice(0, 800)}`);
      await sleep(150);
    }
  }

  async function link(base: string, token: string, readFrom = base): Promise<string> {
    const made = await http(base, 'POST', '/user/links', { token, body: { name: 'Fake', apiBaseUrl: fake.base, authBaseUrl: fake.base, clientId: 'fake-client' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const linkId = made.body.link.linkId as string;
    const settled = await until(() => http(readFrom, 'GET', `/user/links/${linkId}`, { token }), (r) => r.body.link.state !== 'signing-in', 60_000);
    expect(settled.body.link.state, JSON.stringify(settled.body)).toBe('linked');
    return linkId;
  }

  const readJob = (base: string, token: string, linkId: string, jobId: string): Promise<HttpReply> =>
    http(base, 'GET', `/user/links/${linkId}/jobs/${jobId}`, { token });
  const finished = (r: HttpReply): boolean => ['done', 'failed'].includes(r.body?.job?.state);
  const rawReads = (cardId: string): number => fake.seen(`GET /content/${cardId}`).filter((r) => r.search === '').length;

  async function localCards(userId: string, linkId: string): Promise<{ cards: number; maps: { remote_card_id: string; local_card_id: string }[] }> {
    const { db } = deployment.store();
    const rows = await db.selectFrom('cards').select('card_id').where('user_id', '=', userId).execute();
    const maps = await db.selectFrom('link_cards').select(['remote_card_id', 'local_card_id']).where('link_id', '=', linkId).execute();
    return { cards: rows.length, maps };
  }

  it('a puller killed mid-job: the next instance takes the job over and completes it, every card copied exactly once', async () => {
    const me = 'auth0|restart-member';
    const token = await deployment.token(me);
    fake.mediaDelayMs = 1500;
    const first = await serve();
    const linkId = await link(first.url, token);
    const started = await http(first.url, 'POST', `/user/links/${linkId}/pull`, { token, body: {} });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const jobId = started.body.job.jobId as string;

    const copied = (r: HttpReply): any[] => (r.body?.job?.cards ?? []).filter((c: any) => c.state === 'copied');
    const midway = await until(() => readJob(first.url, token, linkId, jobId), (r) => copied(r).length >= 2 || finished(r), 120_000);
    expect(midway.body.job.state).toBe('running');
    const doneBefore = copied(midway).map((c: any) => c.remoteCardId as string);
    // Killed while a media file is on its way (the fake holds each for 1.5 s).
    const mediaAsked = fake.requests.filter((r) => r.path.startsWith('/media/')).length;
    await until(async () => ({ status: 200, headers: {}, body: fake.requests.filter((r) => r.path.startsWith('/media/')).length }), (r) => r.body > mediaAsked, 30_000);
    await first.stop('SIGKILL', 0);
    const atKill = (await deployment.store().db.selectFrom('link_jobs').selectAll().where('job_id', '=', jobId).executeTakeFirstOrThrow());
    expect(atKill.state).toBe('running');
    expect(JSON.parse(atKill.cards).filter((c: any) => c.state === 'copied').length).toBeLessThan(cards.length);

    const second = await serve();
    const done = await until(() => readJob(second.url, token, linkId, jobId), finished, 180_000);
    const job = done.body.job;
    expect(job.state, JSON.stringify(job)).toBe('done');
    expect(job.cards.map((c: any) => c.remoteCardId).sort()).toEqual(cards.map((c) => c.cardId).sort());
    for (const c of job.cards) expect(['copied', 'unchanged'], JSON.stringify(c)).toContain(c.state);

    // Exactly once: one local card a remote card, and the cards done before the kill not read again.
    const mine = await http(second.url, 'GET', '/content/mine', { token });
    expect(mine.body.cards).toHaveLength(cards.length);
    expect(new Set(mine.body.cards.map((c: any) => c.title)).size).toBe(cards.length);
    const { cards: rows, maps } = await localCards(me, linkId);
    expect(rows).toBe(cards.length);
    expect(maps).toHaveLength(cards.length);
    expect(new Set(maps.map((m) => m.local_card_id)).size).toBe(cards.length);
    expect(new Set(maps.map((m) => m.remote_card_id))).toEqual(new Set(cards.map((c) => c.cardId)));
    for (const id of doneBefore) expect(rawReads(id), id).toBe(1);
  });

  it('two instances at once: each job runs once, and one sign-in is polled once an interval', async () => {
    const me = 'auth0|two-instances-member';
    const token = await deployment.token(me);
    fake.mediaDelayMs = 0;
    fake.requests.length = 0;
    const [a, b] = servers.filter((s) => s.child.exitCode === null && s.child.signalCode === null).concat(await serve());
    expect(a && b).toBeTruthy();
    fake.deviceAnswers = Array.from({ length: 5 }, () => ({ status: 400, body: { error: 'authorization_pending' } }));
    const linkId = await link(a!.url, token, b!.url);
    const polls = fake.seen('POST /oauth/token').filter((r) => r.form.grant_type?.endsWith('device_code'));
    expect(polls).toHaveLength(6);
    for (let i = 1; i < polls.length; i++) expect(polls[i]!.at - polls[i - 1]!.at, `poll ${i}`).toBeGreaterThanOrEqual(900);

    const chosen = [cards.slice(0, 2), cards.slice(2, 4), cards.slice(4, 6)];
    const started = await Promise.all(
      chosen.map((group, i) => http((i % 2 ? b : a)!.url, 'POST', `/user/links/${linkId}/pull`, { token, body: { cardIds: group.map((c) => c.cardId) } })),
    );
    for (const s of started) expect(s.status, JSON.stringify(s.body)).toBe(202);
    const jobs = await Promise.all(started.map((s, i) => until(() => readJob((i % 2 ? a : b)!.url, token, linkId, s.body.job.jobId as string), finished, 120_000)));
    for (const [i, r] of jobs.entries()) {
      expect(r.body.job.state).toBe('done');
      expect(r.body.job.cards.map((c: any) => [c.remoteCardId, c.state])).toEqual(chosen[i]!.map((c) => [c.cardId, 'copied']));
    }
    for (const card of cards) expect(rawReads(card.cardId), card.cardId).toBe(1);
    const { cards: rows, maps } = await localCards(me, linkId);
    expect(rows).toBe(cards.length);
    expect(maps).toHaveLength(cards.length);
  });
});
