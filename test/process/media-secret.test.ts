import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { freePort } from '../support/free-port.js';
import { startServer, type ServerProcess } from '../support/processes.js';
import { makeAudio, sha256 } from '../support/media.js';

/**
 * Row 6 of issue 17: `serve --workers 2` with no MEDIA_URL_SECRET. Each worker used to draw its
 * own secret, so an upload URL handed out by one worker was refused (403) by the other, and a
 * restart refused every URL handed out before it. Every request here opens its own connection,
 * as separate clients would, so the cluster hands them to the workers in turn.
 */

interface Answer {
  status: number;
  body: any;
}

/** One request on a connection of its own (no keep-alive: the next may reach the other worker). */
function request(url: string, opts: { method?: string; token?: string; body?: Buffer | object; type?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let payload: Buffer | undefined;
  if (Buffer.isBuffer(opts.body)) {
    payload = opts.body;
    headers['content-type'] = opts.type ?? 'application/octet-stream';
  } else if (opts.body) {
    payload = Buffer.from(JSON.stringify(opts.body));
    headers['content-type'] = 'application/json';
  }
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers, agent: false, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks);
        let body: unknown = text;
        if ((res.headers['content-type'] ?? '').includes('json')) body = JSON.parse(text.toString('utf8'));
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer`)));
    req.end(payload);
  });
}

let deployment: Deployment;
let server: ServerProcess | undefined;
let base: string;
let env: Record<string, string>;

beforeAll(async () => {
  deployment = await createDeployment();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  env = { ...deployment.env, PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL: 'info' };
  expect(env.MEDIA_URL_SECRET).toBeUndefined();
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await deployment?.close();
});

describe('signed media URLs without MEDIA_URL_SECRET', () => {
  it('serve --workers 2: every upload PUT and every signed read succeeds, and URLs outlive a restart', async () => {
    server = await startServer(env, { args: ['--workers', '2'] });
    const token = await deployment.token('auth0|secret-parent');

    // The README's flow, six times: an upload URL from one request, the PUT in the next.
    const uploads: string[] = [];
    const puts: number[] = [];
    for (let i = 0; i < 6; i++) {
      const audio = await makeAudio(1, { hz: 300 + 40 * i });
      const got = await request(`${base}/media/transcode/audio/uploadUrl?sha256=${sha256(audio)}&filename=t${i}.mp3`, { token });
      expect(got.status).toBe(200);
      const put = await request(got.body.upload.uploadUrl, { method: 'PUT', body: audio, type: 'audio/mpeg' });
      puts.push(put.status);
      uploads.push(got.body.upload.uploadId);
    }
    expect(puts).toEqual(Array(6).fill(200));

    let hash: string | undefined;
    for (let i = 0; i < 600 && !hash; i++) {
      const r = await request(`${base}/media/upload/${uploads[0]}/transcoded`, { token });
      expect(r.status).toBe(200);
      hash = r.body.transcode.transcodedSha256 ?? undefined;
      if (!hash) await sleep(100);
    }
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const created = await request(`${base}/content`, {
      method: 'POST',
      token,
      body: { title: 'Tone', content: { chapters: [{ key: '01', title: 'One', tracks: [{ key: '01', title: 'Tone', type: 'audio', trackUrl: `service:#${hash}` }] }] } },
    });
    expect(created.status).toBe(201);
    const cardId: string = created.body.card.cardId;

    // Signed reads: each signed by one worker, fetched (on a new connection) from either.
    const reads: number[] = [];
    let handedOut = '';
    for (let i = 0; i < 6; i++) {
      const card = await request(`${base}/content/${cardId}?playable=true`, { token });
      expect(card.status).toBe(200);
      handedOut = card.body.card.content.chapters[0].tracks[0].trackUrl;
      expect(handedOut.startsWith(`${base}/media/files/${hash}?`)).toBe(true);
      for (let j = 0; j < 2; j++) {
        const file = await request(handedOut);
        reads.push(file.status);
        if (file.status === 200) expect(sha256(file.body)).toBe(hash);
      }
    }
    expect(reads).toEqual(Array(12).fill(200));

    // A restart: the URL handed out before still answers.
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    server = await startServer(env, { args: ['--workers', '2'] });
    const after = await Promise.all([request(handedOut), request(handedOut)]);
    expect(after.map((r) => r.status)).toEqual([200, 200]);
    expect(sha256(after[0]!.body)).toBe(hash);
  }, 180_000);
});
