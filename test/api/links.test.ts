import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { startTestApp, errorCode, type TestApp } from '../support/test-app.js';
import { openEventStream, type EventStreamClient } from '../support/event-stream.js';
import { audioRef, decideAtRemote, makeCard, playsRange, startRemote, waitFor, type Remote } from '../support/linked-remote.js';
import { testDialect } from '../support/test-database.js';

/**
 * Linked services (issue 34), Cardshelf to Cardshelf: a second instance plays the remote, with
 * its own sign-in pages; cards go both ways through the two instances' HTTP interfaces.
 */
describe(`linked services on ${testDialect()}`, { timeout: 300_000 }, () => {
  let remote: Remote;
  let here: TestApp;
  let token: string;
  const ME = 'auth0|link-member';

  beforeAll(async () => {
    remote = await startRemote();
    here = await startTestApp();
    token = await here.token(ME);
  });
  afterAll(async () => {
    await here?.close();
    await remote?.t.close();
  });

  const linkBody = (name = 'Other shelf') => ({ name, apiBaseUrl: remote.base, authBaseUrl: `${remote.base}/`, clientId: 'cardshelf-link-test' });
  const readLink = (linkId: string) => here.call('GET', `/user/links/${linkId}`, { token });

  async function link(decision: 'approve' | 'deny' = 'approve'): Promise<string> {
    const made = await here.call('POST', '/user/links', { token, body: linkBody() });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const { linkId, state, userCode, verificationUri } = made.body.link;
    expect(state).toBe('signing-in');
    expect(verificationUri).toBe(`${remote.base}/activate`);
    await decideAtRemote(remote, userCode, decision);
    const settled = await waitFor(() => readLink(linkId), (r) => r.body.link.state !== 'signing-in');
    expect(settled.body.link.state).toBe(decision === 'approve' ? 'linked' : 'failed');
    return linkId;
  }

  async function runJob(linkId: string, kind: 'pull' | 'push', body: unknown): Promise<any> {
    const started = await here.call('POST', `/user/links/${linkId}/${kind}`, { token, body });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(started.body.job).toMatchObject({ kind, state: 'queued' });
    const done = await waitFor(
      () => here.call('GET', `/user/links/${linkId}/jobs/${started.body.job.jobId as string}`, { token }),
      (r) => ['done', 'failed'].includes(r.body.job.state),
      120_000,
    );
    expect(done.body.job.state, JSON.stringify(done.body.job)).toBe('done');
    return done.body.job;
  }

  it('refuses bad links with 400 in the documented shape, and stores nothing of them', async () => {
    for (const body of [
      { ...linkBody(), apiBaseUrl: 'ftp://example.com' },
      { ...linkBody(), authBaseUrl: 'not a url' },
      { ...linkBody(), apiBaseUrl: 'https://user:pw@example.com' },
      { name: 'x' },
      { ...linkBody(), extra: true },
    ]) {
      const r = await here.call('POST', '/user/links', { token, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(r)).toBe('bad-request');
    }
    expect((await here.call('GET', '/user/links', { token })).body.links).toEqual([]);
    // Garbage to the jobs' routes: 400 or 404 in the documented shape, never a 500.
    for (const [method, url, body] of [
      ['POST', '/user/links/nope/pull', []],
      ['POST', '/user/links/nope/pull', { cardIds: 'abc' }],
      ['POST', '/user/links/nope/pull', { cardIds: [] }],
      ['POST', '/user/links/nope/pull', { cardIds: ['a', 'a'] }],
      ['POST', '/user/links/nope/push', {}],
      ['POST', '/user/links/nope/push', { cardIds: ['x'.repeat(200)] }],
      ['POST', '/user/links/nope/push', { cardIds: ['abcde'], overwrite: 'yes' }],
      ['POST', '/user/links/nope/pull', undefined],
      ['POST', '/user/links/nope/sign-in', undefined],
      ['GET', `/user/links/${'x'.repeat(128)}/jobs/${'y'.repeat(128)}`, undefined],
      ['DELETE', '/user/links/%00', undefined],
    ] as const) {
      const r = await here.call(method, url, { token, body });
      expect([400, 404], `${method} ${url} ${JSON.stringify(body)}: ${r.status}`).toContain(r.status);
      errorCode(r);
    }
    expect((await here.call('GET', '/user/links', { token: await here.token(ME, 'user:content:view') })).status).toBe(403);
  });

  it('a sign-in denied at the remote fails the link, with the reason', async () => {
    const linkId = await link('deny');
    const r = await readLink(linkId);
    expect(r.body.link.reason).toMatch(/denied/);
    expect(r.body.link.userCode).toBeUndefined();
    expect((await here.call('POST', `/user/links/${linkId}/pull`, { token, body: {} })).status).toBe(400);

    // Signed in again, under the same link: a new code, approved this time.
    const again = await here.call('POST', `/user/links/${linkId}/sign-in`, { token });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.link).toMatchObject({ linkId, state: 'signing-in' });
    expect(again.body.link.reason).toBeUndefined();
    await decideAtRemote(remote, again.body.link.userCode as string, 'approve');
    expect((await waitFor(() => readLink(linkId), (r) => r.body.link.state !== 'signing-in')).body.link.state).toBe('linked');
    expect((await here.call('DELETE', `/user/links/${linkId}`, { token })).status).toBe(200);
  });

  it('brings three cards home, playable here; again copies nothing; a change at the remote updates in place; sends one out', async () => {
    const remoteToken = await remote.token();
    const cards = [
      await makeCard(remote.t, remoteToken, 'Bedtime', 2, 2, 300),
      await makeCard(remote.t, remoteToken, 'Songs', 1, 3, 500),
      await makeCard(remote.t, remoteToken, 'Stories', 1, 3, 700),
    ];
    // The member's live events follow the link and the jobs (the app listens for them).
    await here.app.listen({ port: 0, host: '127.0.0.1' });
    const stream: EventStreamClient = await openEventStream(`http://127.0.0.1:${(here.app.server.address() as AddressInfo).port}`, token);
    const linkId = await link();
    await stream.waitFor((e) => e.event === 'link.changed' && e.data.ids.linkId === linkId && e.data.state === 'linked');

    const first = await runJob(linkId, 'pull', {});
    const progress = await stream.waitFor((e) => e.event === 'link.job' && e.data.state === 'done' && e.data.ids.linkId === linkId);
    expect(progress.data).toMatchObject({ read: `/user/links/${linkId}/jobs/${first.jobId as string}`, files: { done: 16, total: 16 }, bytes: first.bytes });
    const seen = stream.events.filter((e) => e.event === 'link.job' && e.data.ids.jobId === first.jobId).map((e) => e.data.files.done as number);
    expect(seen.length).toBeGreaterThan(3);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    stream.close();
    expect(first.cards.map((c: any) => c.state).sort()).toEqual(['copied', 'copied', 'copied']);
    expect(first.files.total).toBe(first.files.done);
    expect(first.files.done).toBe(10 + 3 + 3); // 10 tracks, an icon and a cover a card
    expect(first.bytes).toBeGreaterThan(0);
    const mine = await here.call('GET', '/content/mine', { token });
    expect(mine.body.cards).toHaveLength(3);
    for (const made of cards) {
      const outcome = first.cards.find((c: any) => c.remoteCardId === made.cardId);
      const theirs = (await remote.t.call('GET', `/content/${made.cardId}`, { token: remoteToken })).body.card;
      const ours = (await here.call('GET', `/content/${outcome.cardId as string}`, { token })).body.card;
      expect(ours.title).toBe(theirs.title);
      expect(ours.metadata.description).toBe(theirs.metadata.description);
      expect(ours.content.chapters.map((c: any) => [c.title, c.tracks.map((k: any) => [k.key, k.title, k.trackUrl])])).toEqual(
        theirs.content.chapters.map((c: any) => [c.title, c.tracks.map((k: any) => [k.key, k.title, k.trackUrl])]),
      );
      expect(ours.content.chapters[0].display.icon16x16).toBe(theirs.content.chapters[0].display.icon16x16);
      expect(ours.metadata.cover.imageL).toMatch(/\/media\/public\/[0-9a-f]{64}$/);
      expect(ours.metadata.cover.imageL.startsWith(here.config.publicBaseUrl)).toBe(true);
      const playable = (await here.call('GET', `/content/${outcome.cardId as string}?playable=true`, { token })).body.card;
      for (const chapter of playable.content.chapters) for (const track of chapter.tracks) await playsRange(here, track.trackUrl);
    }

    const again = await runJob(linkId, 'pull', {});
    expect(again.cards.map((c: any) => c.state)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(again).toMatchObject({ files: { done: 0, total: 0 }, bytes: 0 });

    // Changed at the remote (a new track among the old): updated in place, the old audio not fetched again.
    const changed = (await remote.t.call('GET', `/content/${cards[1]!.cardId}`, { token: remoteToken })).body.card;
    changed.title = 'Songs, new';
    changed.content.chapters[0].tracks.push({ key: '04', title: 'New song', trackUrl: await audioRef(remote.t, remoteToken, 1, 900), type: 'audio', format: 'aac' });
    expect((await remote.t.call('POST', '/content', { token: remoteToken, body: { cardId: changed.cardId, title: changed.title, content: changed.content } })).status).toBe(200);
    const third = await runJob(linkId, 'pull', { cardIds: [cards[1]!.cardId] });
    expect(third.cards).toHaveLength(1);
    const localId = first.cards.find((c: any) => c.remoteCardId === cards[1]!.cardId).cardId;
    expect(third.cards[0]).toMatchObject({ state: 'copied', cardId: localId });
    const updated = (await here.call('GET', `/content/${localId as string}`, { token })).body.card;
    expect(updated.title).toBe('Songs, new');
    expect(updated.content.chapters[0].tracks).toHaveLength(4);
    expect((await here.call('GET', '/content/mine', { token })).body.cards).toHaveLength(3);

    // Changed on both sides: left, and reported.
    expect((await here.call('POST', '/content', { token, body: { cardId: localId, title: 'Songs, ours' } })).status).toBe(200);
    expect((await remote.t.call('POST', '/content', { token: remoteToken, body: { cardId: changed.cardId, title: 'Songs, theirs' } })).status).toBe(200);
    const conflict = await runJob(linkId, 'pull', { cardIds: [cards[1]!.cardId] });
    expect(conflict.cards[0]).toMatchObject({ state: 'conflict', cardId: localId });
    expect((await here.call('GET', `/content/${localId as string}`, { token })).body.card.title).toBe('Songs, ours');
    const settled = await runJob(linkId, 'pull', { cardIds: [cards[1]!.cardId], overwrite: true });
    expect(settled.cards[0]).toMatchObject({ state: 'copied', cardId: localId });
    expect((await here.call('GET', `/content/${localId as string}`, { token })).body.card.title).toBe('Songs, theirs');

    // Sent out: a card made here, with audio only here, lands at the remote, playable there.
    const ours = await makeCard(here, token, 'Made here', 1, 2, 1200);
    const pushed = await runJob(linkId, 'push', { cardIds: [ours.cardId] });
    expect(pushed.cards[0]).toMatchObject({ state: 'copied', cardId: ours.cardId });
    const remoteId = pushed.cards[0].remoteCardId as string;
    const theirList = (await remote.t.call('GET', '/content/mine', { token: remoteToken })).body.cards;
    expect(theirList.map((c: any) => c.cardId)).toContain(remoteId);
    const there = (await remote.t.call('GET', `/content/${remoteId}?playable=true`, { token: remoteToken })).body.card;
    expect(there.title).toBe('Made here');
    for (const track of there.content.chapters[0].tracks) await playsRange(remote.t, track.trackUrl);
    const pushedAgain = await runJob(linkId, 'push', { cardIds: [ours.cardId] });
    expect(pushedAgain.cards[0]).toMatchObject({ state: 'unchanged', remoteCardId: remoteId });

    // A card deleted at the remote is reported by a pull of everything, and kept here.
    expect((await remote.t.call('DELETE', `/content/${cards[2]!.cardId}`, { token: remoteToken })).status).toBe(200);
    const afterDelete = await runJob(linkId, 'pull', {});
    expect(afterDelete.cards.find((c: any) => c.remoteCardId === cards[2]!.cardId)).toMatchObject({ state: 'deleted-remote' });
    expect((await here.call('GET', '/content/mine', { token })).body.cards.length).toBeGreaterThanOrEqual(4);

    // Unlinked: gone here, its jobs with it.
    expect((await here.call('DELETE', `/user/links/${linkId}`, { token })).status).toBe(200);
    expect((await readLink(linkId)).status).toBe(404);
  });

  it("another member's link is a 404, as a missing one", async () => {
    const linkId = await link();
    const other = await here.token('auth0|someone-else');
    expect((await here.call('GET', `/user/links/${linkId}`, { token: other })).status).toBe(404);
    expect((await here.call('POST', `/user/links/${linkId}/pull`, { token: other, body: {} })).status).toBe(404);
    expect((await here.call('DELETE', `/user/links/${linkId}`, { token: other })).status).toBe(404);
    expect((await here.call('GET', `/user/links/${linkId}/jobs/nope`, { token })).status).toBe(404);
    expect((await here.call('POST', `/user/links/${linkId}/push`, { token, body: { cardIds: ['zzzzz'] } })).status).toBe(400);
  });
});
