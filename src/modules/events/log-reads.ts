import type { LogFollower } from './log-follower.js';
import type { LoggedEvent } from './repository.js';

/**
 * When the hub reads the log past what it read last (log-follower.ts keeps the place). Wakes
 * coalesce: one read serves every stream. Writing to the streams runs on the thread that answers
 * requests, and costs a write per stream per read (fan-out.ts `flush`): for a family with very
 * many streams open, a read per write would leave little time for the writes themselves. So
 * after a read, the next one waits until the writing is at most MAX_FANOUT_SHARE of the time;
 * what comes meanwhile goes out together in the next read. With a few streams a family this wait
 * is well under a millisecond.
 */
export interface LogReads {
  /** Reads the log now, or after the read under way and its wait. */
  wake(): Promise<void>;
  /** One read now, beside the wakes (the heartbeat's check, before it ends streams). */
  once(): Promise<void>;
  /** Drops the read that waits (the hub closes). */
  stop(): void;
}

/** Events read from the log at once (by the hub, and by a stream's replay). */
export const READ_BATCH = 500;
/** The largest share of its time the hub spends writing events to streams. */
const MAX_FANOUT_SHARE = 0.05;

export function createLogReads(
  follower: LogFollower,
  /** Hands a read's events on and writes them to the streams: the time the wait is measured by. */
  handOn: (events: readonly LoggedEvent[]) => void,
  opts: {
    /** Whether anything reads the log (and the hub is not closing): a wake reads nothing otherwise. */
    wanted: () => boolean;
    log: { warn(obj: object, msg: string): void };
  },
): LogReads {
  let reading = false;
  let readAgain = false;
  /** Set while the next read waits. */
  let cooling: NodeJS.Timeout | undefined;

  async function wake(): Promise<void> {
    if (!opts.wanted()) return;
    if (reading || cooling) {
      readAgain = true;
      return;
    }
    reading = true;
    readAgain = false;
    let writing = 0;
    try {
      for (;;) {
        const { events, full } = await follower.read(READ_BATCH);
        const started = performance.now();
        handOn(events);
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

  return {
    wake,
    async once() {
      const { events } = await follower.read(READ_BATCH);
      handOn(events);
    },
    stop: () => clearTimeout(cooling),
  };
}
