import pLimit from 'p-limit';
import type { PrincipalStands } from '../../auth/principal-stands.js';
import type { Stream } from './stream-registry.js';

/**
 * At each heartbeat, each distinct principal of the open streams is checked again (one read
 * each, a few at a time): what no event of the log said (a row changed by hand, an event
 * pruned before it was read) ends within a heartbeat. A check that fails leaves the streams
 * open; the next heartbeat asks again.
 */

/** Checks that may wait on the database at once. */
const CHECKS_AT_ONCE = 2;

/** Returns the check the heartbeat runs; a check still running when the next one is due is not doubled. */
export function createPrincipalRecheck(deps: {
  streams: Iterable<Stream>;
  principalStands: PrincipalStands;
  /** Reads the log once (the hub's), so that what it says of a principal goes out first. */
  readLog: () => Promise<void>;
  end: (stream: Stream, why: string) => void;
  closing: () => boolean;
  log: { warn(obj: object, msg: string): void };
}): () => Promise<void> {
  let checking = false;
  return async function recheck(): Promise<void> {
    if (checking) return;
    checking = true;
    try {
      const byPrincipal = new Map<string, Stream[]>();
      for (const stream of deps.streams) {
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
            if (!first || deps.closing()) return;
            if (!(await deps.principalStands(first.principal))) {
              // What the log says of it (account.disabled, player.removed) goes out first, so a
              // stream ends with its event whether the log or this check saw the change first.
              await deps.readLog();
              for (const stream of open) if (!stream.closed) deps.end(stream, 'no longer allowed to read these events');
            }
          }),
        ),
      );
    } catch (err) {
      deps.log.warn({ err }, 'live events: checking the streams\' tokens failed');
    } finally {
      checking = false;
    }
  };
}
