import type { LoggedEvent } from './repository.js';
import { revocationOf, shutsOut, type Revocation } from './revocations.js';
import { RETRY_AFTER_SECONDS, type Stream, type StreamRegistry } from './stream-registry.js';

/**
 * What the streams are sent, and when one ends: the events of the log each stream may read
 * (stream-registry.ts finds them), written once per stream per read of the log; heartbeats; and
 * the last comment that says why a stream ended. These are the stream's bytes (docs/api.md,
 * "Live events"); when they are sent is the hub's (hub.ts).
 */
export interface FanOut {
  /** Says the stream started (and, with `resetTo`, that what it asked to resume from is no longer kept). */
  greet(stream: Stream, resetTo: number | undefined): void;
  /** Queues a live event for the streams that may read it, and ends the streams it shuts out (`flush` writes). */
  deliver(event: LoggedEvent): void;
  /** Sends `stream` a batch of what it missed (a replay); an event that shuts its reader out ends it after that event. */
  replay(stream: Stream, events: readonly LoggedEvent[]): void;
  /** Sends `stream` the live events that came while it replayed; from now on `deliver` sends to it directly. */
  goLive(stream: Stream): void;
  /** Writes the queued frames, once per stream. */
  flush(): void;
  /** A heartbeat comment to every stream: a stream with no events still carries bytes, so no proxy or client takes it for dead. */
  heartbeat(): void;
  /** Ends `stream` with a last comment saying `why` (once; a stream ended already is left alone). */
  end(stream: Stream, why: string): void;
}

/** Events a stream still replaying may have waiting from the live flow before it is dropped. */
const MAX_PENDING = 10_000;

const frame = (e: LoggedEvent): string => `id: ${e.id}\nevent: ${e.kind}\ndata: ${e.data}\n\n`;

export function createFanOut(registry: StreamRegistry, bound: { streamBufferBytes: number }): FanOut {
  /**
   * Writes to a stream; a reader that has more than the bound still waiting when more comes is
   * dropped (it reconnects and resumes from the log), so no stream is buffered without bound.
   */
  function write(stream: Stream, chunk: string): void {
    if (stream.closed) return;
    if (stream.sink.buffered() > bound.streamBufferBytes) {
      registry.remove(stream);
      stream.sink.destroy();
      return;
    }
    stream.sink.write(chunk);
  }

  function end(stream: Stream, why: string): void {
    if (stream.closed) return;
    registry.remove(stream);
    stream.sink.end(`: ${why}\n\n`);
  }

  /**
   * Streams with frames in their outbox. Each write to a response is a system call (and an HTTP
   * chunk), so the frames of one read of the log go out in one write per stream, not one per
   * event: when writes come faster than a read and its writes take, the next read finds them all,
   * and a stream's cost stays one write per read however many events it brings.
   */
  const unflushed = new Set<Stream>();

  function flush(): void {
    for (const stream of unflushed) {
      const chunk = stream.outbox;
      stream.outbox = '';
      write(stream, chunk);
    }
    unflushed.clear();
  }

  function send(stream: Stream, event: LoggedEvent, text = frame(event)): void {
    if (stream.closed || event.id <= stream.cursor) return;
    stream.cursor = event.id;
    stream.outbox += text;
    unflushed.add(stream);
  }

  /** Ends `shut` streams after what they were sent: their reader moved, or lost its right to read. */
  function shut(shutOut: Iterable<Stream>, revocation: Revocation): void {
    flush();
    for (const stream of [...shutOut]) end(stream, revocation.why);
  }

  return {
    flush,
    end,

    greet(stream, resetTo) {
      write(stream, `retry: ${RETRY_AFTER_SECONDS * 1000}\n: connected\n\n`);
      if (resetTo !== undefined) write(stream, `id: ${resetTo}\nevent: reset\ndata: {"kind":"reset"}\n\n`);
    },

    deliver(event) {
      // One frame for every stream it goes to.
      const text = frame(event);
      for (const stream of registry.readersOf(event)) {
        if (stream.pending === null) send(stream, event, text);
        else if (stream.pending.push(event) > MAX_PENDING) end(stream, 'too far behind; reconnect');
      }
      // The streams it shuts out, those that were not sent it (a member's players) included: at
      // once, on every instance, since every instance reads the log.
      const revocation = revocationOf(event);
      if (revocation) {
        const shutOut = registry.shutOutBy(revocation);
        if (shutOut.length > 0) shut(shutOut, revocation);
      }
    },

    replay(stream, events) {
      for (const event of events) {
        send(stream, event);
        // The stream ends after it, as a live one does (see `deliver`).
        const revocation = revocationOf(event);
        if (revocation && shutsOut(revocation, stream.principal, stream.reader.familyId)) shut([stream], revocation);
      }
      flush();
    },

    goLive(stream) {
      const pending = stream.pending ?? [];
      stream.pending = null;
      for (const event of pending) send(stream, event);
      flush();
    },

    heartbeat() {
      for (const stream of [...registry.open]) write(stream, ':\n\n');
    },
  };
}
