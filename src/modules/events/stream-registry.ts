import type { Principal } from '../../auth/principal.js';
import type { EventsConfig } from '../../config.js';
import { AppError } from '../../shared/errors.js';
import type { LoggedEvent, Reader } from './repository.js';
import { shutsOut, type Revocation } from './revocations.js';

/**
 * The open event streams of one instance, found by whom they serve: the places they hold against
 * the limits, and the indexes by which an event finds its readers and a revocation the streams
 * it ends. Writing to them is the fan-out's (fan-out.ts).
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

export interface Stream {
  slot: StreamSlot;
  reader: Reader;
  principal: Principal;
  sink: EventSink;
  /** The id of the last event sent (or skipped as unseen): nothing at or below it is sent again. */
  cursor: number;
  /** Live events that came while the stream replayed; null once it follows the log. */
  pending: LoggedEvent[] | null;
  /** Frames sent but not yet written: a read of the log writes once per stream (fan-out.ts `flush`). */
  outbox: string;
  expiry: NodeJS.Timeout | undefined;
  closed: boolean;
}

export interface StreamRegistry {
  /** Takes a place for a stream of `owner`, or throws 429 `rate-limited` with Retry-After. */
  reserve(owner: StreamOwner): StreamSlot;
  /** Registers a started stream; `expired` runs when its token expires (`expiresAt`), unless it was removed first. */
  add(stream: Stream, expiresAt: number | undefined, expired: () => void): void;
  /** Forgets a stream and frees its place (once; later calls do nothing). */
  remove(stream: Stream): void;
  /** The open streams (copy it to end them while going through it). */
  readonly open: ReadonlySet<Stream>;
  /** Streams a registered player holds open. */
  playerStreams(deviceId: string): number;
  /** The streams that may read `event`: its family's, and its user's own. */
  readersOf(event: LoggedEvent): Set<Stream>;
  /** The streams `revocation` ends, those that may not read the event that said it (a member's players) among them. */
  shutOutBy(revocation: Revocation): Stream[];
}

/** What a client waits after a refusal (429) or an end before it tries again, in seconds. */
export const RETRY_AFTER_SECONDS = 5;
/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The 429 of a stream that may not start now (`why`): the client tries again after RETRY_AFTER_SECONDS. */
export const refused = (why: string): AppError =>
  new AppError('rate-limited', `${why}; try again later`, { 'retry-after': String(RETRY_AFTER_SECONDS) });

export function createStreamRegistry(
  limits: Pick<EventsConfig, 'maxStreams' | 'maxStreamsPerUser' | 'maxPlayerStreamsPerFamily'>,
  /** After each removal: the hub stops following the log when nothing reads it any more. */
  opts: { removed: () => void },
): StreamRegistry {
  const open = new Set<Stream>();
  const byFamily = new Map<string, Set<Stream>>();
  const byUser = new Map<string, Set<Stream>>();
  /** Streams by the account their token names (`sub`): a member's own, and its players'. */
  const byAccount = new Map<string, Set<Stream>>();
  /** Streams of registered players, by device id. */
  const byPlayer = new Map<string, Set<Stream>>();
  /** Places held, by reader and by a family's players (keys apart by a NUL, which no id holds). */
  const slotsOf = new Map<string, number>();
  let slots = 0;

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

  return {
    open,
    playerStreams: (deviceId) => byPlayer.get(deviceId)?.size ?? 0,

    reserve({ reader, playerFamily }) {
      // Each place counts against its reader and, for a player, against its family's players:
      // a member's own streams and its family's players' are bounded however many players it
      // registers, so no account takes more than those two limits of the server's places.
      const counted: [key: string, limit: number, refusal: string][] = [
        [`reader\0${reader}`, limits.maxStreamsPerUser, `at most ${limits.maxStreamsPerUser} event streams per user or player may be open on this server`],
      ];
      if (playerFamily !== undefined) {
        counted.push([
          `players\0${playerFamily}`,
          limits.maxPlayerStreamsPerFamily,
          `the players of a family may hold at most ${limits.maxPlayerStreamsPerFamily} event streams on this server`,
        ]);
      }
      const full = counted.find(([key, limit]) => (slotsOf.get(key) ?? 0) >= limit);
      if (full) throw refused(full[2]);
      if (slots >= limits.maxStreams) throw refused('this server holds as many event streams as it may');
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

    add(stream, expiresAt, expired) {
      open.add(stream);
      indexAll(stream, true);
      if (expiresAt !== undefined) {
        stream.expiry = setTimeout(expired, Math.min(MAX_TIMER_MS, Math.max(0, expiresAt - Date.now())));
        stream.expiry.unref();
      }
    },

    remove(stream) {
      if (stream.closed) return;
      stream.closed = true;
      stream.slot.release();
      clearTimeout(stream.expiry);
      open.delete(stream);
      indexAll(stream, false);
      opts.removed();
    },

    readersOf: (event) =>
      new Set<Stream>([
        ...(event.familyId === null ? [] : (byFamily.get(event.familyId) ?? [])),
        ...(event.userId === null ? [] : (byUser.get(event.userId) ?? [])),
      ]),

    shutOutBy(revocation) {
      const candidates = 'account' in revocation ? byAccount.get(revocation.account) : byPlayer.get(revocation.player);
      return [...(candidates ?? [])].filter((s) => shutsOut(revocation, s.principal, s.reader.familyId));
    },
  };
}
