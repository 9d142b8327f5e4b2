import net from 'node:net';

/**
 * The socket node-postgres talks to the database through (its `stream` option), with the
 * writes of one tick of the event loop sent in one system call.
 *
 * node-postgres writes each statement as soon as it is queued, in a `writev` of its own; a
 * pipelined unit of work (guarded-driver.ts) queues several at once (`begin` with the first
 * reads, the writes that do not wait for each other, the live event with the `commit`). So the
 * socket is corked at the first write of a tick and uncorked once the tick's promise callbacks
 * have run (a `process.nextTick` queued from them runs after them): what a request sends
 * together goes out in one `writev`, and nothing waits past the current tick. node-postgres's
 * own cork and uncork around a statement's messages nest inside this one. A card creation went
 * from 7 system calls to PostgreSQL to 3, its round trips (bench/RESULTS.md, 2026-11-28).
 *
 * Over TLS the TLS socket writes to this one's handle directly, past `write`: no batching, and
 * nothing else changes.
 */
export function tickBatchedSocket(): net.Socket {
  const socket = new net.Socket();
  // Installed once connected: `connect` puts the prototype's `write` back on the socket. This
  // listener is the socket's first, so it runs before node-postgres writes its start-up message.
  socket.once('connect', () => {
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    let corked = false;
    const flush = (): void => {
      corked = false;
      socket.uncork();
    };
    socket.write = ((...args: unknown[]) => {
      if (!corked) {
        corked = true;
        socket.cork();
        process.nextTick(flush);
      }
      return write(...args);
    });
  });
  return socket;
}
