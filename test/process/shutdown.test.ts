import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { http, startServer, type Exit, type HttpReply, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';
import { inUnitOfWork, userLock } from '../../src/db/unit-of-work.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once nothing accepts connections on `port` any more. */
async function refusesConnections(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return;
    if (Date.now() > deadline) throw new Error(`port ${port} still accepts connections`);
    await sleep(50);
  }
}

/** The server's exit, or a failure if it is still running `ms` after the signal. */
async function exitWithin(server: ServerProcess, ms = 10_000): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running ${ms} ms after SIGTERM`)), ms);
  });
  try {
    return await Promise.race([server.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until the server has logged the start of a request (its headers have arrived). */
async function requestArrived(server: ServerProcess, url: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!server.stdout().includes(`"url":"${url}"`)) {
    if (Date.now() > deadline) throw new Error(`the server never saw ${url}:\n${server.stdout()}`);
    await sleep(20);
  }
}

describe(`SIGTERM on ${testDialect()}`, () => {
  let deployment: Deployment | undefined;
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
    server = undefined;
    deployment = undefined;
  });

  it('stops accepting, lets a request whose body is still arriving finish, and exits 0', async () => {
    deployment = await createDeployment();
    server = await startServer(deployment.env);
    const { port } = new URL(server.url);
    const token = await deployment.token('auth0|shutdown-slow-body');
    const body = JSON.stringify({ content: [{ item: 'Free1', note: 'x'.repeat(2000) }] });
    const half = Math.floor(body.length / 2);

    const socket = net.connect(Number(port), '127.0.0.1');
    let response = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      response += chunk;
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /wishlists HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n` +
        body.slice(0, half),
    );
    await requestArrived(server, '/wishlists');

    server.child.kill('SIGTERM');
    await refusesConnections(Number(port));
    expect(server.child.exitCode, 'exited with a request in flight').toBeNull();

    // Not end(): a client that half-closes its side gets its connection closed by Node.
    socket.write(body.slice(half));
    await closed;
    expect(response).toMatch(/^HTTP\/1\.1 201 /);
    const stored = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { content: unknown };
    expect(stored.content).toEqual(JSON.parse(body).content);
    expect(await exitWithin(server)).toEqual({ code: 0, signal: null });
  });

  it('exits 1 when a request is still unfinished at the shutdown deadline', async () => {
    deployment = await createDeployment();
    server = await startServer({ ...deployment.env, SHUTDOWN_DEADLINE_MS: '300' });
    const { port } = new URL(server.url);
    const token = await deployment.token('auth0|shutdown-deadline');
    // A body that never finishes arriving: the request stays in flight.
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /wishlists HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"content":`,
    );
    await requestArrived(server, '/wishlists');
    server.child.kill('SIGTERM');
    expect(await exitWithin(server)).toEqual({ code: 1, signal: null });
    expect(server.stdout()).toContain('shutdown deadline passed');
    socket.destroy();
  });

  it('keeps the database open until a request waiting in it has finished', async () => {
    deployment = await createDeployment();
    server = await startServer(deployment.env);
    const user = 'auth0|shutdown-waiting';
    const token = await deployment.token(user);
    const { db } = deployment.store();

    // This process holds the user's lock, so the server's create waits inside the database.
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = inUnitOfWork(deployment.store(), [userLock(user)], async () => {
      locked();
      await released;
    });
    await isLocked;

    let reply: HttpReply | undefined;
    const request = http(server.url, 'POST', '/wishlists', { token, body: { content: [{ item: 'Free1' }] } }).then(
      (r) => {
        reply = r;
        return r;
      },
    );
    // Awaited below; should a check before fail, its end (the server killed) is no unhandled rejection.
    request.catch(() => {});
    await requestArrived(server, '/wishlists');
    await sleep(300);
    server.child.kill('SIGTERM');
    await sleep(300);
    expect(reply, 'the request was not held in the database').toBeUndefined();

    release();
    await holder;
    const answered = await request;
    expect(answered.status, JSON.stringify(answered.body)).toBe(201);
    expect(await exitWithin(server)).toEqual({ code: 0, signal: null });
    const rows = await db.selectFrom('wishlists').select('wishlist_id').where('user_id', '=', user).execute();
    expect(rows).toHaveLength(1);
  });
});
