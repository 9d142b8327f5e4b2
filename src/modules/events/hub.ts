import pLimit from 'p-limit';
import type { Principal } from '../../auth/principal.js';
import type { PrincipalStands } from '../../auth/principal-stands.js';
import type { EventsConfig } from '../../config.js';
import type { Store, Waker } from '../../db/dialect.js';
import { inUnitOfWork } from '../../db/unit-of-work.js';
import { AppError } from '../../shared/errors.js';
import { createLogFollower } from './log-follower.js';
import { EVENTS_CHANNEL } from './publish.js';
import * as repo from './repository.js';
import type { LoggedEvent, Reader } from './repository.js';
import { revocationOf, shutsOut, type Revocation } from './revocations.js';

/** An event as `follow` hands it on: its row of the log, `data` the JSON of the catalogue's data of its kind. */
export type { LoggedEvent } from './repository.js';

/**
 * The open event streams of one instance, and what wakes them. The log (table `live_events`)
 * is the truth: a wake makes the hub read the events after the last it read, once for all its
 * streams, and hand each stream those its reader may see. Wakes come from this process's writes
 * (publish.ts), from PostgreSQL NOTIFY (other instances), and on SQLite from a poll of the log by
 * id (other `serve --workers` processes). Nothing runs while no stream is open, but the pruning.
 */

/** Where a stream's bytes go: the HTTP response, seen without Fastify. */
export interface EventSink {
  write(chunk: string): void;
  /** Bytes written and not yet sent to the client (`writableLength`). */
  buffered(): number;
  /** Ends the stream cleanly after `last`. */
  end(last: string): void;
  /** Drops the connection at once (a slow reader). */
  destroy(): void;
  /** Calls `listener` once when the client goes away. */
  onClose(listener: () => void): void;
  /** Whether the client went away already. */
  gone(): boolean;
}

/** A place among the open streams, taken before the response starts (so a refusal is a 429). */
export interface StreamSlot {
  release(): void;
}

/** Whose a stream is, for the limits (`reserve`). */
export interface StreamOwner {
  /** The reader: a user, or a player (`player:<deviceId>`); each may hold `maxStreamsPerUser`. */
  reader: string;
  /** A player's family: the streams of a family's players together hold `maxPlayerStreamsPerFamily`. */
  playerFamily?: string;
}

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
  /** Open streams, for the metrics and the benchmark. */
  size(): number;
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

/** The largest share of its time the hub spends writing events to streams (see `wake`). */
const MAX_FANOUT_SHARE = 0.05;
/** Events read from the log at once. */
const BATCH = 500;
/** Events a stream still replaying may have waiting from the live flow before it is dropped. */
const MAX_PENDING = 10_000;
/** What a client waits after a refusal (429) or an end before it tries again, in seconds. */
const RETRY_AFTER_SECONDS = 5;
/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Checks of the streams' principals at a heartbeat that may wait on the database at once. */
const CHECKS_AT_ONCE = 2;

interface Stream {
  slot: StreamSlot;
  reader: Reader;
  principal: Principal;
  sink: EventSink;
  /** The id of the last event sent (or skipped as unseen): nothing at or below it is sent again. */
  cursor: number;
  /** Live events that came while the stream replayed; null once it follows the log. */
  pending: LoggedEvent[] | null;
  /** Frames sent but not yet written: a read of the log writes once per stream (see `flush`). */
  outbox: string;
  expiry: NodeJS.Timeout | undefined;
  closed: boolean;
}

const frame = (e: LoggedEvent): string => `id: ${e.id}\nevent: ${e.kind}\ndata: ${e.data}\n\n`;

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
  const streams = new Set<Stream>();
  /** Listeners of every event read (`follow`). */
  const followers = new Set<(event: LoggedEvent) => void>();
  /** Whether anything reads the log: a stream or a follower. */
  const following = (): boolean => streams.size + followers.size + starting > 0;
  /** Streams and followers between their start and their place in `streams` or `followers`. */
  let starting = 0;
  /** A start is over (placed, or given up): when nothing reads any more, the hub stops following. */
  const started = (): void => {
    starting--;
    if (!following()) stopFollowing();
  };
  const byFamily = new Map<string, Set<Stream>>();
  const byUser = new Map<string, Set<Stream>>();
  /** Streams by the account their token names (`sub`): a member's own, and its players'. */
  const byAccount = new Map<string, Set<Stream>>();
  /** Streams of registered players, by device id. */
  const byPlayer = new Map<string, Set<Stream>>();
  /** Places held, by reader and by a family's players (keys apart by a NUL, which no id holds). */
  const slotsOf = new Map<string, number>();
  let slots = 0;
  /** This instance's place in the log (log-follower.ts): every event read is dispatched once. */
  const follower = createLogFollower(db, { holeGraceMs: config.holeGraceMs });
  /** Set while the hub follows the log: settles once the follower is placed. */
  let placed: Promise<void> | undefined;
  let reading = false;
  let readAgain = false;
  /** Set while the next read of the log waits (see `wake`). */
  let cooling: NodeJS.Timeout | undefined;
  let closing = false;
  let waker: Waker | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const index = (map: Map<string, Set<Stream>>, key: string | undefined, stream: Stream, add: boolean): void => {
    if (key === undefined) return;
    const set = map.get(key) ?? new Set<Stream>();
    if (add) set.add(stream);
    else set.delete(stream);
    if (set.size > 0) map.set(key, set);
    else map.delete(key);
  };

  function indexAll(stream: Stream, add: boolean): void {
    index(byFamily, stream.reader.familyId, stream, add);
    index(byUser, stream.reader.userId, stream, add);
    index(byAccount, stream.principal.userId, stream, add);
    index(byPlayer, stream.principal.player?.deviceId, stream, add);
  }

  function remove(stream: Stream): void {
    if (stream.closed) return;
    stream.closed = true;
    stream.slot.release();
    clearTimeout(stream.expiry);
    streams.delete(stream);
    indexAll(stream, false);
    if (!following()) stopFollowing();
  }

  function end(stream: Stream, why: string): void {
    if (stream.closed) return;
    remove(stream);
    stream.sink.end(`: ${why}\n\n`);
  }

  /**
   * Writes to a stream; a reader that has more than the bound still waiting when more comes is
   * dropped (it reconnects and resumes from the log), so no stream is buffered without bound.
   */
  function write(stream: Stream, chunk: string): void {
    if (stream.closed) return;
    if (stream.sink.buffered() > config.streamBufferBytes) {
      remove(stream);
      stream.sink.destroy();
      return;
    }
    stream.sink.write(chunk);
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

  function dispatch(event: LoggedEvent): void {
    for (const follower of followers) follower(event);
    const targets = new Set<Stream>([
      ...(event.familyId === null ? [] : (byFamily.get(event.familyId) ?? [])),
      ...(event.userId === null ? [] : (byUser.get(event.userId) ?? [])),
    ]);
    // One frame for every stream it goes to.
    const text = frame(event);
    for (const stream of targets) {
      if (stream.pending === null) send(stream, event, text);
      else if (stream.pending.push(event) > MAX_PENDING) end(stream, 'too far behind; reconnect');
    }
    // The streams it shuts out, those that were not sent it (a member's players) included: at
    // once, on every instance, since every instance reads the log.
    const revocation = revocationOf(event);
    if (revocation) {
      const candidates = 'account' in revocation ? byAccount.get(revocation.account) : byPlayer.get(revocation.player);
      const shutOut = [...(candidates ?? [])].filter((s) => shutsOut(revocation, s.principal, s.reader.familyId));
      if (shutOut.length > 0) shut(shutOut, revocation);
    }
  }

  /**
   * At each heartbeat, each distinct principal of the open streams is checked again (one read
   * each, a few at a time): what no event of the log said (a row changed by hand, an event
   * pruned before it was read) ends within a heartbeat. A check that fails leaves the streams
   * open; the next heartbeat asks again.
   */
  let checking = false;
  async function checkPrincipals(): Promise<void> {
    if (checking) return;
    checking = true;
    try {
      const byPrincipal = new Map<string, Stream[]>();
      for (const stream of streams) {
        const { userId, player } = stream.principal;
        const key = JSON.stringify([userId, player?.deviceId, player?.credentialId]);
        byPrincipal.set(key, [...(byPrincipal.get(key) ?? []), stream]);
      }
      const limit = pLimit(CHECKS_AT_ONCE);
      await Promise.all(
        [...byPrincipal.values()].map((group) =>
          limit(async () => {
            const open = group.filter((s) => !s.closed);
            const first = open[0];
            if (!first || closing) return;
            if (!(await opts.principalStands(first.principal))) {
              // What the log says of it (account.disabled, player.removed) goes out first, so a
              // stream ends with its event whether the log or this check saw the change first.
              await readLogOnce();
              for (const stream of open) if (!stream.closed) end(stream, 'no longer allowed to read these events');
            }
          }),
        ),
      );
    } catch (err) {
      opts.log.warn({ err }, 'live events: checking the streams\' tokens failed');
    } finally {
      checking = false;
    }
  }

  /**
   * Reads the log past what this hub read last, for every stream; wakes coalesce. Writing to
   * the streams runs on the thread that answers requests, and costs a write per stream per read
   * (`flush`): for a family with very many streams open, a read per write would leave little
   * time for the writes themselves. So after a read, the next one waits until the writing
   * is at most MAX_FANOUT_SHARE of the time; what comes meanwhile goes out together in the next
   * read. With a few streams a family this wait is well under a millisecond.
   */
  /** One read of the log now, beside the wakes (the heartbeat's check, before it ends streams). */
  async function readLogOnce(): Promise<void> {
    const { events } = await follower.read(BATCH);
    for (const event of events) dispatch(event);
    flush();
  }

  async function wake(): Promise<void> {
    if (!following() || closing) return;
    if (reading || cooling) {
      readAgain = true;
      return;
    }
    reading = true;
    readAgain = false;
    let writing = 0;
    try {
      for (;;) {
        const { events, full } = await follower.read(BATCH);
        const started = performance.now();
        for (const event of events) dispatch(event);
        flush();
        writing += performance.now() - started;
        if (!full) break;
      }
    } catch (err) {
      // The next wake (or the poll) reads again from the same place: nothing is lost.
      opts.log.warn({ err }, 'live events: reading the log failed');
    } finally {
      reading = false;
    }
    const rest = writing * (1 / MAX_FANOUT_SHARE - 1);
    if (rest >= 1) {
      cooling = setTimeout(() => {
        cooling = undefined;
        if (readAgain) void wake();
      }, rest);
      cooling.unref();
    } else if (readAgain) {
      void wake();
    }
  }
  const wakeSoon = (): void => void wake();

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
      for (const stream of [...streams]) write(stream, ':\n\n');
      void checkPrincipals();
    }, config.heartbeatMs);
    heartbeat.unref();
    // Woken by the commits of publishing writes, on every instance (a wake with nothing new
    // reads nothing); kept until the hub closes.
    waker ??= store.dialect.wakeOnCommit(EVENTS_CHANNEL, wakeSoon, {
      pollMs: config.pollMs,
      onError: (err) => opts.log.warn({ err }, 'live events: the wake-up connection failed; reconnecting'),
    });
  }

  function stopFollowing(): void {
    placed = undefined;
    clearInterval(heartbeat);
    heartbeat = undefined;
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
    size: () => streams.size,
    playerStreams: (deviceId) => byPlayer.get(deviceId)?.size ?? 0,
    closing: () => closing,

    reserve({ reader, playerFamily }) {
      // Each place counts against its reader and, for a player, against its family's players:
      // a member's own streams and its family's players' are bounded however many players it
      // registers, so no account takes more than those two limits of the server's places.
      const counted: [key: string, limit: number, refusal: string][] = [
        [`reader\0${reader}`, config.maxStreamsPerUser, `at most ${config.maxStreamsPerUser} event streams per user or player may be open on this server`],
      ];
      if (playerFamily !== undefined) {
        counted.push([
          `players\0${playerFamily}`,
          config.maxPlayerStreamsPerFamily,
          `the players of a family may hold at most ${config.maxPlayerStreamsPerFamily} event streams on this server`,
        ]);
      }
      const full = counted.find(([key, limit]) => (slotsOf.get(key) ?? 0) >= limit);
      if (closing || full || slots >= config.maxStreams) {
        const which = closing ? 'the server is shutting down' : full ? full[2] : 'this server holds as many event streams as it may';
        throw new AppError('rate-limited', `${which}; try again later`, { 'retry-after': String(RETRY_AFTER_SECONDS) });
      }
      for (const [key] of counted) slotsOf.set(key, (slotsOf.get(key) ?? 0) + 1);
      slots++;
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          slots--;
          for (const [key] of counted) {
            const left = (slotsOf.get(key) ?? 1) - 1;
            if (left > 0) slotsOf.set(key, left);
            else slotsOf.delete(key);
          }
        },
      };
    },

    async start(slot, { reader, principal, lastEventId, expiresAt }, sink) {
      let bounds: Awaited<ReturnType<typeof repo.logBounds>>;
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
        return;
      }
      // From the reader's newest event, not the log's: an event of its family still being
      // written has an id above the one, not always above the other.
      const stream: Stream = { slot, reader, principal, sink, cursor: bounds.readerLastId, pending: [], outbox: '', expiry: undefined, closed: false };
      streams.add(stream);
      started();
      indexAll(stream, true);
      sink.onClose(() => remove(stream));
      if (expiresAt !== undefined) {
        stream.expiry = setTimeout(() => end(stream, 'token expired; reconnect with a new one'), Math.min(MAX_TIMER_MS, Math.max(0, expiresAt - Date.now())));
        stream.expiry.unref();
      }
      write(stream, `retry: ${RETRY_AFTER_SECONDS * 1000}\n: connected\n\n`);

      // A resume from before the log's window (or from another log) cannot be replayed.
      if (lastEventId !== undefined && (lastEventId < bounds.prunedUpTo || lastEventId > bounds.lastId)) {
        write(stream, `id: ${bounds.readerLastId}\nevent: reset\ndata: {"kind":"reset"}\n\n`);
      } else if (lastEventId !== undefined) {
        stream.cursor = lastEventId;
      }
      try {
        // Replays from the cursor (the family's events from the reader's joining on: a new
        // member does not read what the family did before); what the hub reads meanwhile waits
        // in `pending`.
        for (;;) {
          const events = await repo.eventsOfReaderAfter(db, reader, stream.cursor, BATCH, bounds.joinedAt);
          for (const event of events) {
            send(stream, event);
            // The stream ends after it, as a live one does (see `dispatch`).
            const revocation = revocationOf(event);
            if (revocation && shutsOut(revocation, principal, reader.familyId)) shut([stream], revocation);
          }
          flush();
          if (events.length < BATCH || stream.closed) break;
        }
      } catch (err) {
        end(stream, 'the log could not be read; reconnect');
        throw err;
      }
      const pending = stream.pending ?? [];
      stream.pending = null;
      for (const event of pending) send(stream, event);
      flush();
      // Events that committed before this stream joined but after the hub's last read.
      void wake();
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
      for (const stream of [...streams]) end(stream, 'server shutting down; reconnect');
      clearTimeout(cooling);
      stopFollowing();
      await waker?.close();
    },
  };
}
