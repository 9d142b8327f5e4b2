import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { createAccountService } from '../../src/accounts/service.js';
import { openStore } from '../../src/db/store.js';
import { startTestApp, type Reply, type TestApp } from './test-app.js';
import { Browser, field, formAction, type Answer } from './oauth-browser.js';
import { freePort } from './free-port.js';
import type { TestDialect } from './test-database.js';
import { local, makeAudio, pollTranscode, uploadAudio } from './media.js';
import { uniquePng } from './held-media.js';

/**
 * Another Cardshelf playing the remote of a link (issue 34): a real server on a loopback port,
 * with an account that signs in at its pages.
 */
export interface Remote {
  t: TestApp;
  base: string;
  userId: string;
  email: string;
  password: string;
  token(): Promise<string>;
}

export const REMOTE_PASSWORD = 'correct horse battery staple';

export async function startRemote(env: Record<string, string> = {}, dialect?: TestDialect): Promise<Remote> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await startTestApp({ PUBLIC_BASE_URL: base, ...env }, { dialect });
  await t.app.listen({ port, host: '127.0.0.1' });
  const store = openStore(t.config.database);
  const email = 'remote@example.com';
  let userId: string;
  try {
    userId = (await createAccountService(store).add({ email, displayName: 'Rae', password: REMOTE_PASSWORD })).userId;
  } finally {
    await store.db.destroy();
  }
  return { t, base, userId, email, password: REMOTE_PASSWORD, token: () => t.token(userId) };
}

/** Enters the code at the remote's /activate, signs in there and approves (or denies). */
export async function decideAtRemote(remote: Remote, userCode: string, decision: 'approve' | 'deny'): Promise<void> {
  const browser = new Browser(remote.t);
  // The remote's URLs are absolute (its PUBLIC_BASE_URL, on 127.0.0.1): followed within it.
  const follow = async (answer: Answer): Promise<Answer> => {
    let current = answer;
    for (let i = 0; i < 10 && current.location && (current.location.startsWith('/') || current.location.startsWith(remote.base)); i++) {
      current = await browser.request('GET', current.location.replace(remote.base, ''));
    }
    return current;
  };
  const entry = await browser.request('GET', '/activate');
  const confirm = await browser.request('POST', '/activate', { xsrf: field(entry.text, 'xsrf'), user_code: userCode });
  expect(confirm.status, confirm.text.slice(0, 300)).toBe(200);
  const signIn = await follow(await browser.request('POST', '/activate', { xsrf: field(confirm.text, 'xsrf'), user_code: field(confirm.text, 'user_code'), confirm: 'yes' }));
  const approval = await follow(await browser.request('POST', formAction(signIn.text), { csrf: field(signIn.text, 'csrf'), email: remote.email, password: remote.password }));
  expect(approval.text).toContain('Approve this app?');
  await follow(await browser.request('POST', formAction(approval.text), { csrf: field(approval.text, 'csrf'), decision }));
}

/** Polls `read` until `done` says its answer is final (or the time is up: then the test fails). */
export async function waitFor(read: () => Promise<Reply>, done: (r: Reply) => boolean, ms = 60_000): Promise<Reply> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await read();
    if (done(r)) return r;
    if (Date.now() > until) throw new Error(`still waiting: ${JSON.stringify(r.body).slice(0, 800)}`);
    await sleep(200);
  }
}

/** Uploads tone audio to `t` and answers its `yoto:#` reference (transcoded). */
export async function audioRef(t: TestApp, token: string, seconds: number, hz: number): Promise<string> {
  const { uploadId, put } = await uploadAudio(t, token, await makeAudio(seconds, { hz }));
  expect(put.status).toBe(200);
  const done = await pollTranscode(t, token, uploadId);
  expect(done.status).toBe(200);
  return `yoto:#${done.body.transcode.transcodedSha256 as string}`;
}

/** An icon of the caller's own: its `yoto:#` reference. */
export async function iconRef(t: TestApp, token: string): Promise<string> {
  const r = await t.call('POST', '/media/displayIcons/user/me/upload', { token, rawBody: await uniquePng(), headers: { 'content-type': 'image/png' } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return `yoto:#${r.body.displayIcon.mediaId as string}`;
}

/** A cover of the caller's own: its URL. */
export async function coverUrl(t: TestApp, token: string): Promise<string> {
  const r = await t.call('POST', '/media/coverImage/user/me/upload?autoconvert=false', { token, rawBody: await uniquePng(), headers: { 'content-type': 'image/png' } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.coverImage.mediaUrl as string;
}

/** A card of `chapters` chapters of `tracksEach` tracks of real audio, each with an icon, and a cover. */
export async function makeCard(t: TestApp, token: string, title: string, chapters: number, tracksEach: number, hz: number): Promise<{ cardId: string; refs: string[] }> {
  const icon = await iconRef(t, token);
  const cover = await coverUrl(t, token);
  const refs: string[] = [];
  const content = { chapters: [] as unknown[] };
  for (let c = 0; c < chapters; c++) {
    const tracks = [];
    for (let k = 0; k < tracksEach; k++) {
      const ref = await audioRef(t, token, 1, hz + c * 37 + k * 11);
      refs.push(ref);
      tracks.push({ key: String(k + 1).padStart(2, '0'), title: `${title} ${c + 1}.${k + 1}`, trackUrl: ref, type: 'audio', format: 'aac', display: { icon16x16: icon } });
    }
    content.chapters.push({ key: String(c + 1).padStart(2, '0'), title: `${title} chapter ${c + 1}`, tracks, display: { icon16x16: icon } });
  }
  const r = await t.call('POST', '/content', { token, body: { title, content, metadata: { cover: { imageL: cover }, description: `${title}, made on this side` } } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { cardId: r.body.card.cardId as string, refs };
}

/** Fetches a signed media URL of `t` with a range: 206 and the bytes asked for. */
export async function playsRange(t: TestApp, url: string): Promise<void> {
  const r = await t.app.inject({ method: 'GET', url: local(url), headers: { range: 'bytes=0-99' } });
  expect(r.statusCode).toBe(206);
  expect(r.rawPayload.length).toBe(100);
}
