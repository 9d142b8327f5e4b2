import { once } from 'node:events';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { tickBatchedSocket } from '../../src/db/pg-socket.js';

/**
 * node-postgres's socket (src/db/pg-socket.ts): what is written in one tick goes out in one
 * system call, and nothing waits past the tick. The system calls are counted where the socket
 * hands its buffered writes to the operating system (`_writev`, or `_write` for one).
 */
describe('tickBatchedSocket', () => {
  const closers: (() => void)[] = [];
  afterEach(() => {
    for (const close of closers.splice(0)) close();
  });

  async function connected(): Promise<{ socket: net.Socket; calls: () => number; received: () => Promise<string> }> {
    let data = '';
    let ended: () => void = () => {};
    const done = new Promise<void>((resolve) => (ended = resolve));
    const server = net.createServer((peer) => {
      peer.setEncoding('utf8').on('data', (chunk: string) => (data += chunk));
      peer.on('end', () => ended());
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const socket = tickBatchedSocket();
    socket.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    closers.push(() => {
      socket.destroy();
      server.close();
    });
    let calls = 0;
    const spied = socket as unknown as Record<'_writev' | '_write', (...args: unknown[]) => unknown>;
    for (const method of ['_writev', '_write'] as const) {
      const original = spied[method].bind(socket);
      spied[method] = (...args: unknown[]) => {
        calls++;
        return original(...args);
      };
    }
    return {
      socket,
      calls: () => calls,
      received: async () => {
        socket.end();
        await done;
        return data;
      },
    };
  }

  it('sends what one tick writes, awaited promises between, in one system call', async () => {
    const { socket, calls, received } = await connected();
    socket.write('begin;');
    await Promise.resolve();
    socket.write('select 1;');
    await Promise.resolve();
    socket.write('commit;');
    expect(calls()).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls()).toBe(1);
    expect(await received()).toBe('begin;select 1;commit;');
  });

  it('sends the writes of each tick in that tick, in order', async () => {
    const { socket, calls, received } = await connected();
    for (const text of ['one;', 'two;', 'three;']) {
      socket.write(text);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(calls()).toBe(3);
    expect(await received()).toBe('one;two;three;');
  });

  it('keeps batching inside a cork of its own (node-postgres corks around a statement)', async () => {
    const { socket, calls, received } = await connected();
    socket.cork();
    socket.write('parse;');
    socket.write('bind;');
    socket.uncork();
    socket.write('sync;');
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls()).toBe(1);
    expect(await received()).toBe('parse;bind;sync;');
  });
});
