import type { Principal } from '../../auth/principal.js';
import type { PrincipalStands } from '../../auth/principal-stands.js';
import type { EventsConfig } from '../../config.js';
import type { Store, Waker } from '../../db/dialect.js';
import { inUnitOfWork } from '../../db/unit-of-work.js';
import { createFanOut } from './fan-out.js';
import { createLogFollower } from './log-follower.js';
import { createLogReads, READ_BATCH } from './log-reads.js';
import { createPrincipalRecheck } from './principal-recheck.js';
import { EVENTS_CHANNEL } from './publish.js';
import * as repo from './repository.js';
import type { LoggedEvent, Reader } from './repository.js';
import { createStreamRegistry, refused, type EventSink, type Stream, type StreamOwner, type StreamSlot } from './stream-registry.js';

/** An event as `follow` hands it on: its row of the log, `data` the JSON of the catalogue's data of its kind. */
export type { LoggedEvent } from './repository.js';
export type { EventSink, StreamOwner, StreamSlot } from './stream-registry.js';

/**
 * The live event streams of one instance (docs/api.md, "Live events"). The log (table
 * `live_events`) is the truth: a wake makes the hub read the events after the last it read, once
 * for all its streams, and hand each stream those its reader may see. Wakes come from this
 * process's writes (publish.ts), from PostgreSQL NOTIFY (other instances), and on SQLite from a
 * poll of the log by id (other `serve --workers` processes). Nothing runs while no stream is
 * open, but the pruning.
 *
 * The hub puts the parts together and holds their lives: it follows the log while anything
 * reads it, starts a stream (its replay, then the live flow), and ends everything at shutdown.
 *   stream-registry.ts     the open streams: their places against the limits, who reads what
 *   fan-out.ts             what the streams are sent, and the last word of one that ends
 *   log-follower.ts        this instance's place in the log
 *   log-reads.ts           when the log is read: wakes coalesce, the writing's share of time is bounded
 *   principal-recheck.ts   the heartbeat's check that each stream's reader may still read
 */

export interface OpenStream {
  reader: Reader;
  /** Who the token speaks for: the stream ends when that right is taken away (revocations.ts). */
  principal: Principal;
  /** The last event the client saw (`Last-Event-ID`), if it resumes. */
  lastEventId: number | undefined;
  /** When the client's token expires (ms since the epoch): the stream ends then. */
  expiresAt: number | undefined;
}

export interface EventHub {
  /** Takes a place for a stream of `owner`, or throws 429 `rate-limited` with Retry-After. */
  reserve(owner: StreamOwner): StreamSlot;
  /** Starts a stream in a reserved place: replays what it missed, then follows the log. */
  start(slot: StreamSlot, open: OpenStream, sink: EventSink): Promise<void>;
  /** Ends every stream (the server shuts down) and stops the wakers. */
  close(): Promise<void>;
  /** Streams a registered player holds open on this instance. */
  playerStreams(deviceId: string): number;
  /** Whether the hub is closing (the server shuts down: its streams end, their clients go elsewhere). */
  closing(): boolean;
  /**
   * Calls `listener` with every event this instance reads from the log from now on, whoever it
   * is for, in the log's order (the MQTT bridge, which serves many families at once). While a
   * listener is registered the hub follows the log as it does for an open stream. Returns the
   * function that removes the listener.
   */
  follow(listener: (event: LoggedEvent) => void): Promise<() => void>;
}

/** Where a new stream starts reading the log (repository.ts `logBounds`). */
type LogBounds = Awaited<ReturnType<typeof repo.logBounds>>;

export function createEventHub(
  store: Store,
  config: EventsConfig,
  opts: {
    log: { warn(obj: object, msg: string): void };
    /** Asked for each stream's principal at every heartbeat: a stream whose right is gone ends. */
    principalStands: PrincipalStands;
  },
): EventHub {
  const { db } = store;
  const registry = createStreamRegistry(config, {
    removed: () => {
      if (!following()) stopFollowing();
    },
  });
  const fanOut = createFanOut(registry, config);
  /** Listeners of every event read (`follow`). */
  const followers = new Set<(event: LoggedEvent) => void>();
  /** Whether anything reads the log: a stream or a follower. */
  const following = (): boolean => registry.open.size + followers.size + starting > 0;
  /** Streams and followers between their start and their place in the registry or `followers`. */
  let starting = 0;
  /** A start is over (placed, or given up): when nothing reads any more, the hub stops following. */
  const started = (): void => {
    starting--;
    if (!following()) stopFollowing();
  };
  /** This instance's place in the log (log-follower.ts): every event read is handed on once. */
  const follower = createLogFollower(db, { holeGraceMs: config.holeGraceMs });
  /** Set while the hub follows the log: settles once the follower is placed. */
  let placed: Promise<void> | undefined;
  let closing = false;
  let waker: Waker | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  /** Hands each event read to the followers and to the streams, in the log's order, then writes them out. */
  function handOn(events: readonly LoggedEvent[]): void {
    for (const event of events) {
      for (const follower of followers) follower(event);
      fanOut.deliver(event);
    }
    fanOut.flush();
  }

  const reads = createLogReads(follower, handOn, { wanted: () => following() && !closing, log: opts.log });
  const recheck = createPrincipalRecheck({
    streams: registry.open,
    principalStands: opts.principalStands,
    readLog: () => reads.once(),
    end: (stream, why) => fanOut.end(stream, why),
    closing: () => closing,
    log: opts.log,
  });

  /** Starts following the log (a first stream or follower); settles once the follower is placed. */
  function ensureFollowing(): Promise<void> {
    if (placed) return placed;
    const placing = follower.begin().catch((err: unknown) => {
      if (placed === placing) placed = undefined;
      throw err;
    });
    placed = placing;
    startFollowing();
    return placing;
  }

  function startFollowing(): void {
    heartbeat = setInterval(() => {
      fanOut.heartbeat();
      void recheck();
    }, config.heartbeatMs);
    heartbeat.unref();
    // Woken by the commits of publishing writes, on every instance (a wake with nothing new
    // reads nothing); kept until the hub closes.
    waker ??= store.dialect.wakeOnCommit(EVENTS_CHANNEL, () => void reads.wake(), {
      pollMs: config.pollMs,
      onError: (err) => opts.log.warn({ err }, 'live events: the wake-up connection failed; reconnecting'),
    });
  }

  function stopFollowing(): void {
    placed = undefined;
    clearInterval(heartbeat);
    heartbeat = undefined;
  }

  /**
   * Registers a stream in `slot`, once the hub follows the log, with where its reader's events
   * start; nothing when its client left or the server began to shut down meanwhile.
   */
  async function admit(slot: StreamSlot, { reader, principal, expiresAt }: OpenStream, sink: EventSink): Promise<{ stream: Stream; bounds: LogBounds } | undefined> {
    let bounds: LogBounds;
    // Counted as reading from here: the follower is not placed anew under a stream that starts.
    starting++;
    try {
      // A player reads its family as the member it acts through: from that member's joining.
      bounds = await repo.logBounds(db, principal.userId, reader);
      await ensureFollowing();
    } catch (err) {
      slot.release();
      started();
      throw err;
    }
    if (sink.gone() || closing) {
      slot.release();
      started();
      // The server began to shut down while this stream started: it ends as the others did.
      if (closing && !sink.gone()) sink.end(': server shutting down; reconnect\n\n');
      return undefined;
    }
    // From the reader's newest event, not the log's: an event of its family still being
    // written has an id above the one, not always above the other.
    const stream: Stream = { slot, reader, principal, sink, cursor: bounds.readerLastId, pending: [], outbox: '', expiry: undefined, closed: false };
    registry.add(stream, expiresAt, () => fanOut.end(stream, 'token expired; reconnect with a new one'));
    started();
    sink.onClose(() => registry.remove(stream));
    return { stream, bounds };
  }

  async function prune(): Promise<void> {
    const before = new Date(Date.now() - config.retentionMs).toISOString();
    await inUnitOfWork(store, [], (trx) => repo.pruneBefore(trx, before));
  }
  const pruner = setInterval(() => {
    prune().catch((err: unknown) => opts.log.warn({ err }, 'live events: pruning the log failed'));
  }, Math.min(config.retentionMs, 60_000));
  pruner.unref();

  return {
    playerStreams: (deviceId) => registry.playerStreams(deviceId),
    closing: () => closing,

    reserve(owner) {
      if (closing) throw refused('the server is shutting down');
      return registry.reserve(owner);
    },

    async start(slot, open, sink) {
      const admitted = await admit(slot, open, sink);
      if (!admitted) return;
      const { stream, bounds } = admitted;
      const { lastEventId } = open;
      // A resume from before the log's window (or from another log) cannot be replayed.
      const lost = lastEventId !== undefined && (lastEventId < bounds.prunedUpTo || lastEventId > bounds.lastId);
      fanOut.greet(stream, lost ? bounds.readerLastId : undefined);
      if (lastEventId !== undefined && !lost) stream.cursor = lastEventId;
      try {
        // Replays from the cursor (the family's events from the reader's joining on: a new
        // member does not read what the family did before); what the hub reads meanwhile waits
        // in the stream's `pending`.
        for (;;) {
          const events = await repo.eventsOfReaderAfter(db, stream.reader, stream.cursor, READ_BATCH, bounds.joinedAt);
          fanOut.replay(stream, events);
          if (events.length < READ_BATCH || stream.closed) break;
        }
      } catch (err) {
        fanOut.end(stream, 'the log could not be read; reconnect');
        throw err;
      }
      fanOut.goLive(stream);
      // Events that committed before this stream joined but after the hub's last read.
      void reads.wake();
    },

    async follow(listener) {
      starting++;
      try {
        await ensureFollowing();
        followers.add(listener);
      } finally {
        started();
      }
      return () => {
        followers.delete(listener);
        if (!following()) stopFollowing();
      };
    },

    async close() {
      closing = true;
      followers.clear();
      clearInterval(pruner);
      for (const stream of [...registry.open]) fanOut.end(stream, 'server shutting down; reconnect');
      reads.stop();
      stopFollowing();
      await waker?.close();
    },
  };
}
