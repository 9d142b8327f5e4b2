import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/store.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { startBystander, startFakeRemote, sha256Hex, type FakeRemote } from '../support/fake-remote.js';
import { waitFor } from '../support/linked-remote.js';
import { makeAudio } from '../support/media.js';
import { testDialect } from '../support/test-database.js';

/**
 * Linked services against a remote that fails or attacks (issue 34, "A remote is untrusted
 * input", "Jobs that survive"): a fake remote (test/support/fake-remote.ts) reached as
 * http://localhost:<port>, linked from a test app; every outcome read through the local API.
 */
describe(`linked services, a hostile or failing remote, on ${testDialect()}`, { timeout: 120_000 }, () => {
  let fake: FakeRemote;
  let here: TestApp;
  let token: string;
  let v4: Awaited<ReturnType<typeof startBystander>>;
  let v6: Awaited<ReturnType<typeof startBystander>>;
  const audio: Record<'one' | 'two' | 'private', { bytes: Buffer; hash: string }> = {} as never;
  /** A member of its own for each test (a member holds at most 10 links). */
  let me = '';
  let members = 0;

  beforeAll(async () => {
    for (const [name, hz] of [['one', 330], ['two', 550], ['private', 770]] as const) {
      const bytes = await makeAudio(1, { hz });
      audio[name] = { bytes, hash: sha256Hex(bytes) };
    }
    fake = await startFakeRemote();
    v4 = await startBystander('127.0.0.1', audio.private.bytes);
    v6 = await startBystander('::1', audio.private.bytes);
    here = await startTestApp({ LINK_REMOTE_TIMEOUT_SECONDS: '10' });
  });
  afterAll(async () => {
    await here?.close();
    await fake?.close();
    await v4?.close();
    await v6?.close();
  });
  beforeEach(async () => {
    me = `auth0|hostile-${++members}`;
    token = await here.token(me);
    fake.cards = [];
    fake.clearOverrides();
    fake.deviceAnswers = [];
    fake.withholdRefreshToken = false;
    fake.refuseRefresh = false;
    fake.mediaDelayMs = 0;
    fake.requests.length = 0;
    v4.hits.length = 0;
    v6.hits.length = 0;
  });

  const readLink = (app: TestApp, linkId: string, t = token) => app.call('GET', `/user/links/${linkId}`, { token: t });

  /** Starts a link to the fake and waits until its sign-in settles. */
  async function link(app = here, t = token): Promise<any> {
    const made = await app.call('POST', '/user/links', { token: t, body: { name: 'Fake', apiBaseUrl: fake.base, authBaseUrl: fake.base, clientId: 'fake-client' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.link).toMatchObject({ state: 'signing-in', userCode: 'ABCD-EFGH', verificationUri: `${fake.base}/activate` });
    return (await waitFor(() => readLink(app, made.body.link.linkId, t), (r) => r.body.link.state !== 'signing-in', 30_000)).body.link;
  }

  async function linked(app = here, t = token): Promise<string> {
    const made = await link(app, t);
    expect(made.state, JSON.stringify(made)).toBe('linked');
    return made.linkId as string;
  }

  async function pull(linkId: string, body: unknown = {}, app = here, t = token): Promise<any> {
    const started = await app.call('POST', `/user/links/${linkId}/pull`, { token: t, body });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const done = await waitFor(
      () => app.call('GET', `/user/links/${linkId}/jobs/${started.body.job.jobId as string}`, { token: t }),
      (r) => ['done', 'failed'].includes(r.body.job.state),
      90_000,
    );
    return done.body.job;
  }

  const goodCard = (name: 'one' | 'two', title = `Good ${name}`) => fake.addCard(title, audio[name].hash, fake.serve(name, audio[name].bytes));
  const outcome = (job: any, remoteCardId: string): any => job.cards.find((c: any) => c.remoteCardId === remoteCardId);
  const devicePolls = () => fake.seen('POST /oauth/token').filter((r) => r.form.grant_type?.endsWith('device_code'));

  describe('the device sign-in', () => {
    it('reads authorization_pending alike whether answered with 403 or 400, then links', async () => {
      fake.deviceAnswers = [
        { status: 403, body: { error: 'authorization_pending' } },
        { status: 400, body: { error: 'authorization_pending' } },
        { status: 403, body: { error: 'authorization_pending' } },
      ];
      const made = await link();
      expect(made.state, JSON.stringify(made)).toBe('linked');
      const polls = devicePolls();
      expect(polls).toHaveLength(4);
      for (let i = 1; i < polls.length; i++) expect(polls[i]!.at - polls[i - 1]!.at).toBeGreaterThanOrEqual(900);
    });

    it('after slow_down, the next poll comes at least 5 seconds later', async () => {
      fake.deviceAnswers = [
        { status: 400, body: { error: 'authorization_pending' } },
        { status: 400, body: { error: 'slow_down' } },
        { status: 400, body: { error: 'authorization_pending' } },
      ];
      const made = await link();
      expect(made.state).toBe('linked');
      const polls = devicePolls();
      expect(polls).toHaveLength(4);
      expect(polls[1]!.at - polls[0]!.at).toBeLessThan(4000);
      expect(polls[2]!.at - polls[1]!.at).toBeGreaterThanOrEqual(5000);
      expect(polls[3]!.at - polls[2]!.at).toBeGreaterThanOrEqual(5000);
    });

    it.each([
      ['expired_token', { status: 400, body: { error: 'expired_token' } }, /expired/],
      ['access_denied', { status: 403, body: { error: 'access_denied' } }, /denied/],
    ])('%s: the link fails with the reason', async (_name, answer, reason) => {
      fake.deviceAnswers = [answer];
      const made = await link();
      expect(made.state).toBe('failed');
      expect(made.reason).toMatch(reason);
      expect(made.userCode).toBeUndefined();
      expect(devicePolls()).toHaveLength(1);
    });

    it('tokens without a refresh token: the link fails with the reason', async () => {
      fake.withholdRefreshToken = true;
      const made = await link();
      expect(made.state).toBe('failed');
      expect(made.reason).toMatch(/refresh token/);
    });
  });

  describe('media URLs that point where a remote may not send us', () => {
    it.each([
      ['a loopback address by number', () => `http://127.0.0.1:${v4.port}/x`],
      ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data'],
      ['the IPv6 loopback', () => `http://[::1]:${v6.port}/`],
      ['a redirect from the remote host to a loopback address', () => `${fake.base}/media/redirect`],
    ])('%s: that card fails, refused, nothing fetched; the other card copies', async (_name, url) => {
      fake.override('GET /media/redirect', (_r, res) => {
        res.writeHead(302, { location: `http://127.0.0.1:${v4.port}/x` }).end();
        return true;
      });
      const good = goodCard('one');
      const bad = fake.addCard('Hostile', audio.private.hash, url());
      const linkId = await linked();
      const started = Date.now();
      const job = await pull(linkId);
      expect(job.state, JSON.stringify(job)).toBe('done');
      expect(outcome(job, good.cardId)).toMatchObject({ state: 'copied' });
      expect(outcome(job, bad.cardId)).toMatchObject({ state: 'failed', cardId: null });
      expect(outcome(job, bad.cardId).error).toMatch(/refused/);
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(v4.hits).toEqual([]);
      expect(v6.hits).toEqual([]);
      const mine = (await here.call('GET', '/content/mine', { token })).body.cards.map((c: any) => c.title);
      expect(mine).not.toContain('Hostile');
    });

    it('with LINKS_ALLOW_PRIVATE_NETWORKS=true the loopback one is fetched (the metadata address still not)', async () => {
      const open = await startTestApp({ LINKS_ALLOW_PRIVATE_NETWORKS: 'true' });
      try {
        const t = await open.token(me);
        const loopback = fake.addCard('On the LAN', audio.private.hash, `http://127.0.0.1:${v4.port}/x`);
        const metadata = fake.addCard('Metadata', audio.two.hash, 'http://169.254.169.254/latest/meta-data');
        const linkId = await linked(open, t);
        const job = await pull(linkId, {}, open, t);
        expect(outcome(job, loopback.cardId), JSON.stringify(job)).toMatchObject({ state: 'copied' });
        expect(outcome(job, metadata.cardId)).toMatchObject({ state: 'failed' });
        expect(outcome(job, metadata.cardId).error).toMatch(/refused/);
        expect(v4.hits).toEqual(['/x']);
      } finally {
        await open.close();
      }
    });
  });

  it('a 50 MB answer to /content/mine: the job fails, too large, quickly, the body not read whole', async () => {
    let sent = 0;
    fake.override('GET /content/mine', async (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.from(`{"cardId":"${'x'.repeat(1000)}"},`);
      res.write('{"cards":[');
      while (sent < 50 * 1024 * 1024 && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
      }
      res.end('{}]}');
      return true;
    });
    const linkId = await linked();
    const heapBefore = process.memoryUsage().heapUsed;
    const started = Date.now();
    const job = await pull(linkId);
    expect(job.state).toBe('failed');
    expect(job.error).toMatch(/too large/);
    expect(Date.now() - started).toBeLessThan(10_000);
    // What reached the socket before the reader gave up: the limit (5 MiB) and the buffers, not 50 MB.
    expect(sent).toBeLessThan(20 * 1024 * 1024);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(40 * 1024 * 1024);
  });

  describe('a remote that is busy or broken', () => {
    it.each([
      [429, { 'retry-after': '1' }],
      [503, { 'retry-after': '1' }],
    ])('%s with Retry-After: 1, then 200: the job completes; the retry came no sooner than 1 s later', async (status, headers) => {
      const card = goodCard('one');
      let refused = false;
      fake.override(`GET /content/${card.cardId}`, (r, res) => {
        if (refused || r.search !== '') return false;
        refused = true;
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end('{"error":"busy"}');
        return true;
      });
      const linkId = await linked();
      const job = await pull(linkId);
      expect(job.state).toBe('done');
      expect(outcome(job, card.cardId)).toMatchObject({ state: 'copied' });
      const reads = fake.seen(`GET /content/${card.cardId}`).filter((r) => r.search === '');
      expect(reads).toHaveLength(2);
      expect(reads[1]!.at - reads[0]!.at).toBeGreaterThanOrEqual(990);
    });

    it('500 every time: that card fails after the retries; the other copies', async () => {
      const good = goodCard('one');
      const broken = goodCard('two', 'Broken');
      fake.override(`GET /content/${broken.cardId}`, (_r, res) => {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"oops"}');
        return true;
      });
      const linkId = await linked();
      const job = await pull(linkId);
      expect(job.state).toBe('done');
      expect(outcome(job, good.cardId)).toMatchObject({ state: 'copied' });
      expect(outcome(job, broken.cardId)).toMatchObject({ state: 'failed' });
      expect(outcome(job, broken.cardId).error).toMatch(/500/);
      expect(fake.seen(`GET /content/${broken.cardId}`).length).toBeGreaterThan(1);
    });
  });

  describe('the access token', () => {
    it('answered 401 once expired: refreshed with the refresh token, and the job goes on', async () => {
      const card = goodCard('one');
      const linkId = await linked();
      const refreshToken = fake.issued.refresh.at(-1);
      fake.expireAccessTokens();
      const job = await pull(linkId);
      expect(job.state, JSON.stringify(job)).toBe('done');
      expect(outcome(job, card.cardId)).toMatchObject({ state: 'copied' });
      const refreshes = fake.seen('POST /oauth/token').filter((r) => r.form.grant_type === 'refresh_token');
      expect(refreshes.map((r) => r.form.refresh_token)).toEqual([refreshToken]);
      expect((await readLink(here, linkId)).body.link.state).toBe('linked');
    });

    it.each([
      ['a pull of every card', () => ({})],
      ['a pull of chosen cards', () => ({ cardIds: fake.cards.map((c) => c.cardId) })],
    ])('a refresh refused (400 invalid_grant) on %s: the link fails with the reason, the job fails', async (_name, body) => {
      goodCard('one');
      goodCard('two');
      const linkId = await linked();
      fake.expireAccessTokens();
      fake.refuseRefresh = true;
      const job = await pull(linkId, body());
      expect(job.state, JSON.stringify(job)).toBe('failed');
      expect(job.error).toMatch(/invalid_grant/);
      expect(job.cards.filter((c: any) => c.state === 'pending')).toEqual([]);
      const after = (await readLink(here, linkId)).body.link;
      expect(after.state).toBe('failed');
      expect(after.reason).toMatch(/invalid_grant/);
      expect(fake.seen('POST /oauth/token').filter((r) => r.form.grant_type === 'refresh_token')).toHaveLength(1);
    });
  });

  it('a card whose audio is not audio (HTML): that card fails, not audio, nothing kept; the other copies', async () => {
    const html = Buffer.from(`<!doctype html><html><head><title>Hi</title></head><body>${'not audio '.repeat(200)}</body></html>`);
    const good = goodCard('two');
    const bad = fake.addCard('Web page', sha256Hex(html), fake.serve('page', html, 'audio/mpeg'));
    const linkId = await linked();
    const job = await pull(linkId);
    expect(job.state).toBe('done');
    expect(outcome(job, good.cardId)).toMatchObject({ state: 'copied' });
    expect(outcome(job, bad.cardId)).toMatchObject({ state: 'failed', cardId: null });
    expect(outcome(job, bad.cardId).error).toMatch(/not audio/);
    expect(fake.seen('GET /media/page')).toHaveLength(1);
    const mine = (await here.call('GET', '/content/mine', { token })).body.cards.map((c: any) => c.title);
    expect(mine).not.toContain('Web page');
    const store = openStore(here.config.database);
    try {
      const held = await store.db.selectFrom('media_objects').selectAll().where('sha256', '=', sha256Hex(html)).execute();
      expect(held).toEqual([]);
    } finally {
      await store.db.destroy();
    }
  });

  it('unlink revokes the refresh token at the remote and forgets it; the tokens are never in clear in the row', async () => {
    const linkId = await linked();
    const access = fake.issued.access.at(-1)!;
    const refresh = fake.issued.refresh.at(-1)!;
    const store = openStore(here.config.database);
    try {
      const row = await store.db.selectFrom('links').selectAll().where('link_id', '=', linkId).executeTakeFirstOrThrow();
      expect(row.access_token_sealed).toBeTruthy();
      expect(row.refresh_token_sealed).toBeTruthy();
      const text = JSON.stringify(row);
      expect(text).not.toContain(access);
      expect(text).not.toContain(refresh);
      expect((await here.call('DELETE', `/user/links/${linkId}`, { token })).status).toBe(200);
      // The revocation follows the unlink (the member does not wait for the remote).
      await expect.poll(() => fake.seen('POST /oauth/revoke').length, { timeout: 10_000 }).toBe(1);
      expect(fake.seen('POST /oauth/revoke').map((r) => r.form)).toEqual([expect.objectContaining({ token: refresh, token_type_hint: 'refresh_token' })]);
      expect(await store.db.selectFrom('links').selectAll().where('link_id', '=', linkId).execute()).toEqual([]);
      expect((await readLink(here, linkId)).status).toBe(404);
    } finally {
      await store.db.destroy();
    }
  });
});
