import { asUnavailable } from '../../db/errors.js';
import type { Log } from '../../shared/log.js';
import { RepeatFilter } from '../../shared/repeat-filter.js';

/**
 * How the links module's background work (the sign-in poller, the job runner) logs a failure:
 * the database being away is no bug of theirs, so it is one warning per kind and window, as the
 * request log and the transcode queue do; anything else is an error with its stack.
 */
export function backgroundFailureLog(log: Log, what: string): (err: unknown, fields?: Record<string, string>) => void {
  const repeats = new RepeatFilter(10_000);
  return (err, fields = {}) => {
    const failure = asUnavailable(err);
    if (!failure) log.error({ err, ...fields }, `${what} failed`);
    else if (repeats.admit(`${failure.reason} ${failure.detail}`) !== undefined) {
      log.warn({ reason: failure.reason, cause: failure.detail }, `${what}: database unavailable`);
    }
  };
}
