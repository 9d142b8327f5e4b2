import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addressKind } from '../../src/modules/links/remote-address.js';
import {
  remoteDownload,
  RemoteError,
  remoteJson,
  remoteUpload,
  retryAfterMs,
  withRetries,
  type RemotePolicy,
} from '../../src/modules/links/remote-http.js';

/** A real server on 127.0.0.1 with one handler per path, counting the requests each path got. */
interface TestServer {
  base: string;
  hits: Map<string, number>;
  route(path: string, handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  close(): Promise<void>;
}

async function startServer(): Promise<TestServer> {
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const handler = routes.get(path);
    if (handler) handler(req, res);
    else res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    hits,
    route: (path, handler) => routes.set(path, handler),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

const MiB = 1024 * 1024;
const policy = (over: Partial<RemotePolicy> = {}): RemotePolicy => ({
  trustedHosts: ['127.0.0.1'],
  allowPrivateNetworks: false,
  timeoutMs: 5_000,
  maxJsonBytes: 5 * MiB,
  ...over,
});
const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
};
/** The RemoteError a promise rejects with (the test fails if it resolves or throws anything else). */
async function remoteError(promise: Promise<unknown>): Promise<RemoteError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RemoteError);
  return err as RemoteError;
}

let a: TestServer;
let b: TestServer;
/** Bytes a huge answer managed to write before the client hung up, by path. */
const sent = new Map<string, number>();

/** Writes `total` bytes of a JSON array of spaces, minding back-pressure, until done or closed. */
function pumpHugeJson(path: string, res: ServerResponse, total: number): void {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  let written = 0;
  res.write('[');
  const pump = (): void => {
    while (written < total) {
      written += chunk.length;
      sent.set(path, written);
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end(']');
  };
  pump();
}

beforeAll(async () => {
  a = await startServer();
  b = await startServer();
  a.route('/json', (_req, res) => json(res, 200, { ok: true }));
  a.route('/echo', (req, res) => json(res, 200, { authorization: req.headers.authorization ?? null }));
  b.route('/echo', (req, res) => json(res, 200, { authorization: req.headers.authorization ?? null }));
  a.route('/to-b', (_req, res) => res.writeHead(302, { location: `${b.base}/echo` }).end());
  a.route('/to-self', (_req, res) => res.writeHead(302, { location: '/echo' }).end());
  a.route('/redirect', (req, res) => {
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/';
    res.writeHead(302, { location: to }).end();
  });
  a.route('/method', (req, res) => json(res, 200, { method: req.method, type: req.headers['content-type'] ?? null }));
  a.route('/see-other', (_req, res) => res.writeHead(303, { location: '/method' }).end());
  a.route('/temporary', (_req, res) => res.writeHead(307, { location: '/upload' }).end());
  a.route('/loop', (_req, res) => res.writeHead(302, { location: '/loop' }).end());
  a.route('/huge-chunked', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    pumpHugeJson('/huge-chunked', res, 50 * MiB);
  });
  a.route('/huge-declared', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * MiB + 2) });
    pumpHugeJson('/huge-declared', res, 50 * MiB);
  });
  a.route('/declared-then-stalls', (_req, res) => {
    // Declares 50 MB and sends 10 bytes: only the Content-Length check can refuse it quickly.
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * MiB) });
    res.write('[         ');
  });
  a.route('/never', () => undefined);
  a.route('/stalls', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"cards": [');
  });
  a.route('/not-json', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>'));
  a.route('/proto', (_req, res) => res.writeHead(200).end('{"__proto__": {"admin": true}}'));
  a.route('/empty-200', (_req, res) => res.writeHead(200).end());
  a.route('/no-content', (_req, res) => res.writeHead(204).end());
  a.route('/pending', (_req, res) => json(res, 400, { error: 'authorization_pending' }));
  a.route('/fail', (_req, res) => json(res, 500, { error: 'boom' }));
  a.route('/gone', (_req, res) => json(res, 404, { error: 'not found' }));
  a.route('/media', (_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mp4', 'content-length': '1000' }).end(Buffer.alloc(1000, 7));
  });
  a.route('/media-chunked', (_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mp4' });
    for (let i = 0; i < 10; i++) res.write(Buffer.alloc(1000, 7));
    res.end();
  });
  a.route('/media-stalls', (_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mp4', 'content-length': '1000' });
    res.write(Buffer.alloc(100, 7));
  });
  a.route('/upload', (req, res) => {
    const hash = createHash('sha256');
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      size += chunk.length;
    });
    req.on('end', () =>
      json(res, 200, { method: req.method, type: req.headers['content-type'], size, sha256: hash.digest('hex') }),
    );
  });
});
afterAll(async () => {
  await a.close();
  await b.close();
});
beforeEach(() => {
  a.hits.clear();
  b.hits.clear();
  sent.clear();
});

describe('the address classifier', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['2606:4700::1', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['127.0.0.1', 'local'],
    ['127.0.0.2', 'local'],
    ['::1', 'local'],
    ['::ffff:127.0.0.1', 'local'],
    ['10.1.2.3', 'local'],
    ['172.16.0.1', 'local'],
    ['172.31.255.255', 'local'],
    ['192.168.1.10', 'local'],
    ['::ffff:192.168.1.10', 'local'],
    ['100.64.0.1', 'local'],
    ['fd00::1', 'local'],
    ['fc00::1', 'local'],
    ['169.254.169.254', 'forbidden'],
    ['::ffff:169.254.169.254', 'forbidden'],
    ['169.254.0.1', 'forbidden'],
    ['fe80::1', 'forbidden'],
    ['0.0.0.0', 'forbidden'],
    ['0.1.2.3', 'forbidden'],
    ['::', 'forbidden'],
    ['224.0.0.1', 'forbidden'],
    ['239.255.255.250', 'forbidden'],
    ['ff02::1', 'forbidden'],
    ['255.255.255.255', 'forbidden'],
    ['240.0.0.1', 'forbidden'],
    ['192.0.2.1', 'forbidden'],
    ['198.18.0.1', 'forbidden'],
    ['2001:db8::1', 'forbidden'],
    ['fec0::1', 'forbidden'],
    ['64:ff9b::7f00:1', 'forbidden'],
    ['2002:7f00:1::1', 'forbidden'],
    // ipaddr.js reads the dotted form (as glibc prints IPv4-compatible addresses) as IPv4-mapped.
    ['::127.0.0.1', 'local'],
    ['::7f00:1', 'forbidden'],
    ['::ffff:0:7f00:1', 'forbidden'],
    ['not an address', 'forbidden'],
  ])('%s is %s', (address, kind) => {
    expect(addressKind(address)).toBe(kind);
  });
});

describe('which addresses a remote may be fetched from', () => {
  it('fetches JSON from a trusted host on a loopback address (a self-hosted remote)', async () => {
    const answer = await remoteJson<{ ok: boolean }>(policy(), `${a.base}/json`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ ok: true });
    expect(answer.headers.get('content-type')).toBe('application/json');
  });

  it('refuses the same URL when its host is not one of the remote\'s own, before connecting', async () => {
    const err = await remoteError(remoteJson(policy({ trustedHosts: ['remote.example'] }), `${a.base}/json`));
    expect(err.code).toBe('refused-address');
    expect(a.hits.get('/json')).toBeUndefined();
  });

  it('takes a local address of any host when the operator allows private networks', async () => {
    const answer = await remoteJson(policy({ trustedHosts: [], allowPrivateNetworks: true }), `${a.base}/json`);
    expect(answer.body).toEqual({ ok: true });
  });

  it.each([
    ['http://127.0.0.2:9/json'],
    ['http://169.254.169.254/latest/meta-data/'],
    ['http://[::1]:9/json'],
    ['http://[::ffff:127.0.0.1]:9/json'],
    ['http://localhost:9/json'],
    ['http://10.0.0.1/json'],
    ['http://0.0.0.0:9/json'],
  ])('refuses a trusted host\'s redirect to %s, whose host is not trusted', async (to) => {
    const err = await remoteError(remoteJson(policy(), `${a.base}/redirect?to=${encodeURIComponent(to)}`));
    expect(err.code).toBe('refused-address');
    expect(a.hits.get('/redirect')).toBe(1);
  });

  it('refuses the metadata address even when the operator allows private networks', async () => {
    const err = await remoteError(
      remoteJson(policy({ allowPrivateNetworks: true }), 'http://169.254.169.254/latest/meta-data/'),
    );
    expect(err.code).toBe('refused-address');
  });

  it.each([['file:///etc/passwd'], ['ftp://127.0.0.1/x'], ['data:application/json,{}'], ['gopher://127.0.0.1:70/']])(
    'refuses the URL %s (not http or https)',
    async (url) => {
      const err = await remoteError(remoteJson(policy(), url));
      expect(err.code).toBe('refused-address');
    },
  );

  it('refuses a redirect to another scheme', async () => {
    const err = await remoteError(remoteJson(policy(), `${a.base}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`));
    expect(err.code).toBe('refused-address');
  });

  it('follows redirects to allowed hosts, at most five', async () => {
    const answer = await remoteJson(policy(), `${a.base}/redirect?to=${encodeURIComponent(`${b.base}/echo`)}`);
    expect(answer.status).toBe(200);
    const err = await remoteError(remoteJson(policy(), `${a.base}/loop`));
    expect(err.code).toBe('bad-answer');
    expect(a.hits.get('/loop')).toBe(6);
  });
});

describe('the method and body on redirects', () => {
  it('continues a 303 as a GET without body', async () => {
    const answer = await remoteJson(policy(), `${a.base}/see-other`, { method: 'POST', json: { a: 1 } });
    expect(answer.body).toEqual({ method: 'GET', type: null });
  });

  it('repeats the method and a Buffer body on a 307, and refuses to repeat a stream', async () => {
    const bytes = Buffer.from('hello');
    const again = await remoteUpload(policy(), `${a.base}/temporary`, { method: 'PUT', body: bytes });
    expect(again.body).toMatchObject({ method: 'PUT', size: 5 });
    const stream = Readable.from([bytes]);
    const err = await remoteError(remoteUpload(policy(), `${a.base}/temporary`, { method: 'PUT', body: stream, contentLength: 5 }));
    expect(err.code).toBe('bad-answer');
    expect(stream.destroyed).toBe(true);
  });
});

describe('the Authorization header on redirects', () => {
  const headers = { Authorization: 'Bearer secret-token' };

  it('is not forwarded to another origin', async () => {
    const answer = await remoteJson<{ authorization: string | null }>(policy(), `${a.base}/to-b`, { headers });
    expect(b.hits.get('/echo')).toBe(1);
    expect(answer.body.authorization).toBeNull();
  });

  it('is kept on a redirect within the same origin', async () => {
    const answer = await remoteJson<{ authorization: string | null }>(policy(), `${a.base}/to-self`, { headers });
    expect(answer.body.authorization).toBe('Bearer secret-token');
  });
});

describe('the size of an answer', () => {
  it.each([['/huge-chunked'], ['/huge-declared']])(
    'refuses a 50 MB JSON answer (%s) as too-large without reading it all',
    async (path) => {
      const err = await remoteError(remoteJson(policy(), `${a.base}${path}`));
      expect(err.code).toBe('too-large');
      // The server could write only what the socket buffers held before the client hung up.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(sent.get(path) ?? 0).toBeLessThan(25 * MiB);
    },
  );

  it('refuses a declared Content-Length over the limit before any body arrives', async () => {
    const started = Date.now();
    const err = await remoteError(remoteJson(policy({ timeoutMs: 3_000 }), `${a.base}/declared-then-stalls`));
    expect(err.code).toBe('too-large');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('takes an answer within the limit', async () => {
    const answer = await remoteJson(policy({ maxJsonBytes: 100 }), `${a.base}/json`);
    expect(answer.body).toEqual({ ok: true });
  });
});

describe('the time of an answer', () => {
  it.each([
    ['a server that never answers', '/never'],
    ['a server that stalls mid-body', '/stalls'],
  ])('ends a request to %s with a timeout', async (_what, path) => {
    const started = Date.now();
    const err = await remoteError(remoteJson(policy({ timeoutMs: 300 }), `${a.base}${path}`));
    expect(err.code).toBe('timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('ends a download whose body stalls with a timeout on the stream', async () => {
    const download = await remoteDownload(policy(), `${a.base}/media-stalls`, { maxBytes: 10_000, timeoutMs: 300 });
    const err = await remoteError(buffer(download.body));
    expect(err.code).toBe('timeout');
  });
});

describe('answers that are not what was asked', () => {
  it.each([['/not-json'], ['/proto'], ['/empty-200']])('refuses %s as a bad answer', async (path) => {
    const err = await remoteError(remoteJson(policy(), `${a.base}${path}`));
    expect(err.code).toBe('bad-answer');
  });

  it('gives no body for a 204', async () => {
    const answer = await remoteJson(policy(), `${a.base}/no-content`, { method: 'DELETE' });
    expect(answer).toMatchObject({ status: 204, body: undefined });
  });

  it('throws a non-2xx answer with its status, or returns it when the caller accepts that status', async () => {
    const err = await remoteError(remoteJson(policy(), `${a.base}/pending`, { method: 'POST', form: { a: 'b' } }));
    expect(err).toMatchObject({ code: 'http', status: 400 });
    const answer = await remoteJson(policy(), `${a.base}/pending`, { method: 'POST', form: { a: 'b' }, acceptStatus: [400] });
    expect(answer).toMatchObject({ status: 400, body: { error: 'authorization_pending' } });
  });

  it('never puts the bearer token, the form body or the query in an error message', async () => {
    const secrets = { headers: { Authorization: 'Bearer tok-SECRET-1' }, form: { refresh_token: 'rt-SECRET-2' } };
    const messages = await Promise.all(
      [
        remoteJson(policy(), `${a.base}/fail?sig=q-SECRET-3`, { method: 'POST', ...secrets }),
        remoteJson(policy({ timeoutMs: 300 }), `${a.base}/never?sig=q-SECRET-3`, { method: 'POST', ...secrets }),
        remoteJson(policy({ trustedHosts: [] }), `${a.base}/json?sig=q-SECRET-3`, { method: 'POST', ...secrets }),
        remoteJson(policy(), 'http://127.0.0.1:1/x?sig=q-SECRET-3', { method: 'POST', ...secrets }),
      ].map(async (call, i) => {
        const err = await remoteError(call);
        return `${i} ${err.code} ${err.message} ${String(err.cause)}`;
      }),
    );
    expect(messages.map((m) => m.split(' ')[1])).toEqual(['http', 'timeout', 'refused-address', 'network']);
    for (const message of messages) expect(message).not.toMatch(/SECRET/);
  });
});

describe('withRetries', () => {
  /** A route answering `failures` in turn, then 200. */
  function flaky(path: string, failures: ((res: ServerResponse) => void)[]): void {
    let n = 0;
    a.route(path, (_req, res) => {
      const fail = failures[n++];
      if (fail) fail(res);
      else json(res, 200, { ok: true, attempts: n });
    });
  }
  const recorder = (): { waits: number[]; sleep: (ms: number) => Promise<void> } => {
    const waits: number[] = [];
    return { waits, sleep: async (ms) => void waits.push(ms) };
  };

  it('waits Retry-After seconds on 429, then succeeds', async () => {
    flaky('/busy', [(res) => json(res, 429, {}, { 'retry-after': '2' })]);
    const { waits, sleep } = recorder();
    const answer = await withRetries(() => remoteJson(policy(), `${a.base}/busy`), { sleep });
    expect(answer.body).toEqual({ ok: true, attempts: 2 });
    expect(waits).toEqual([2000]);
  });

  it('waits until a Retry-After HTTP-date on 503, capped at maxWaitMs', async () => {
    const inFiveSeconds = new Date(Date.now() + 5_000).toUTCString();
    flaky('/down', [
      (res) => json(res, 503, {}, { 'retry-after': inFiveSeconds }),
      (res) => json(res, 503, {}, { 'retry-after': '3600' }),
    ]);
    const { waits, sleep } = recorder();
    await withRetries(() => remoteJson(policy(), `${a.base}/down`), { sleep, maxWaitMs: 10_000 });
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThan(3_000);
    expect(waits[0]).toBeLessThanOrEqual(5_000);
    expect(waits[1]).toBe(10_000);
  });

  it('backs off exponentially with jitter on 500, and gives up after `tries`', async () => {
    const { waits, sleep } = recorder();
    const err = await remoteError(
      withRetries(() => remoteJson(policy(), `${a.base}/fail`), { sleep, tries: 4, baseDelayMs: 100 }),
    );
    expect(err).toMatchObject({ code: 'http', status: 500 });
    expect(a.hits.get('/fail')).toBe(4);
    expect(waits).toHaveLength(3);
    [100, 200, 400].forEach((full, i) => {
      expect(waits[i]).toBeGreaterThanOrEqual(full / 2);
      expect(waits[i]).toBeLessThanOrEqual(full);
    });
  });

  it('retries a network error', async () => {
    const { waits, sleep } = recorder();
    const err = await remoteError(
      withRetries(() => remoteJson(policy(), 'http://127.0.0.1:1/x'), { sleep, tries: 2, baseDelayMs: 10 }),
    );
    expect(err.code).toBe('network');
    expect(waits).toHaveLength(1);
  });

  it.each([
    ['a 404', '/gone', policy()],
    ['a refused address', '/json', policy({ trustedHosts: [] })],
    ['a bad answer', '/not-json', policy()],
  ])('throws %s at once, without retrying', async (_what, path, p) => {
    const { waits, sleep } = recorder();
    await remoteError(withRetries(() => remoteJson(p, `${a.base}${path}`), { sleep }));
    expect(waits).toEqual([]);
    expect(a.hits.get(path) ?? 0).toBeLessThanOrEqual(1);
  });

  it.each([
    ['120', 120_000],
    [' 0 ', 0],
    [new Date(Date.now() - 60_000).toUTCString(), 0],
    ['soon', undefined],
    [undefined, undefined],
  ])('reads Retry-After %j as %j ms', (value, ms) => {
    expect(retryAfterMs(value)).toBe(ms);
  });
});

describe('remoteDownload', () => {
  it('streams a body within maxBytes with its declared type and length', async () => {
    const download = await remoteDownload(policy(), `${a.base}/media`, { maxBytes: 1000 });
    expect(download).toMatchObject({ contentType: 'audio/mp4', contentLength: 1000 });
    expect((await buffer(download.body)).length).toBe(1000);
  });

  it('refuses a declared length over maxBytes at once', async () => {
    const err = await remoteError(remoteDownload(policy(), `${a.base}/media`, { maxBytes: 999 }));
    expect(err.code).toBe('too-large');
  });

  it('errors the stream once the bytes pass maxBytes', async () => {
    const download = await remoteDownload(policy(), `${a.base}/media-chunked`, { maxBytes: 5_500 });
    const err = await remoteError(buffer(download.body));
    expect(err.code).toBe('too-large');
  });

  it('refuses a media URL at a local address from a host that is not the remote\'s own', async () => {
    const err = await remoteError(remoteDownload(policy({ trustedHosts: [] }), `${a.base}/media`, { maxBytes: 1000 }));
    expect(err.code).toBe('refused-address');
    expect(a.hits.get('/media')).toBeUndefined();
  });
});

describe('remoteUpload', () => {
  const bytes = Buffer.alloc(200_000, 3);
  const sha256 = createHash('sha256').update(bytes).digest('hex');

  it.each([
    ['a Buffer', (): Buffer | Readable => bytes],
    ['a Readable', (): Buffer | Readable => Readable.from([bytes.subarray(0, 100_000), bytes.subarray(100_000)])],
  ])('sends %s and reads the JSON answer', async (_what, body) => {
    const answer = await remoteUpload(policy(), `${a.base}/upload`, {
      method: 'PUT',
      body: body(),
      contentLength: bytes.length,
      contentType: 'audio/mp4',
    });
    expect(answer).toEqual({ status: 200, body: { method: 'PUT', type: 'audio/mp4', size: bytes.length, sha256 } });
  });

  it('throws a non-2xx answer', async () => {
    const err = await remoteError(remoteUpload(policy(), `${a.base}/fail`, { method: 'POST', body: bytes }));
    expect(err).toMatchObject({ code: 'http', status: 500 });
  });
});

describe('https', () => {
  /**
   * The connection goes to the checked IP, yet TLS must name and verify the URL's host. The
   * client runs in a child process that trusts a self-signed certificate for `localhost` (Node
   * reads NODE_EXTRA_CA_CERTS only at start).
   */
  it('verifies the certificate against the URL\'s host name while connecting to the checked address', async () => {
    const run = promisify(execFile);
    const dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-remote-tls-'));
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    await run('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost',
    ]);
    const seen: { sni: string | undefined; host: string | undefined }[] = [];
    const server = https.createServer({ key: await readFile(key), cert: await readFile(cert) }, (req, res) => {
      seen.push({ sni: (req.socket as import('node:tls').TLSSocket).servername || undefined, host: req.headers.host });
      json(res, 200, { ok: true });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const client = new URL('../../src/modules/links/remote-http.ts', import.meta.url).href;
      const script = `
        const { remoteJson } = await import(${JSON.stringify(client)});
        const policy = { trustedHosts: ['localhost', '127.0.0.1'], allowPrivateNetworks: false, timeoutMs: 5000, maxJsonBytes: 1000 };
        for (const host of ['localhost', '127.0.0.1']) {
          const url = 'https://' + host + ':${port}/json';
          console.log(await remoteJson(policy, url).then((a) => JSON.stringify(a.body), (e) => e.code + ' ' + e.message));
        }`;
      const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: cert },
      });
      const [byName, byAddress] = stdout.trim().split('\n');
      expect(byName).toBe('{"ok":true}');
      // The certificate names localhost only: the bare address is not in it.
      expect(byAddress).toMatch(/^network .*ERR_TLS_CERT_ALTNAME_INVALID/);
      expect(seen[0]).toEqual({ sni: 'localhost', host: `localhost:${port}` });
    } finally {
      server.closeAllConnections();
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
