import { computed, effect } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { refresh, tokens } from './auth.js';
import { backoffMs, concerns, DEFAULT_RETRY_MS, readEventStream, type EventsNamed, type KindPattern, type LiveEvent } from './live.js';

/**
 * Follows GET /user/family/events while someone is signed in, so that pages show what other
 * members change without a reload. Browsers' EventSource cannot send the bearer token, so the
 * stream is read with fetch; after a drop it resumes from the last event's id (Last-Event-ID),
 * after a growing wait (live.ts, backoffMs). A 401 renews the token as api.ts does.
 */
const EVENTS = '/user/family/events';
/** Events that come together (a burst of changes) make one refetch. */
const COALESCE_MS = 200;

type Listener = (event: LiveEvent) => void;
const listeners = new Set<Listener>();

/** Whether the stream is open: `data-live` on <html>, for people's tools and the browser tests. */
function setOpen(open: boolean): void {
  document.documentElement.dataset.live = open ? 'open' : 'closed';
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** Connects, reads, reconnects, until `signal` aborts (sign-out). */
async function follow(signal: AbortSignal): Promise<void> {
  let lastEventId: string | undefined;
  let retryMs = DEFAULT_RETRY_MS;
  let failures = 0;
  while (!signal.aborted) {
    let wait: number | undefined;
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${tokens.value?.accessToken ?? ''}` };
      if (lastEventId) headers['last-event-id'] = lastEventId;
      const answer = await fetch(EVENTS, { headers, signal, cache: 'no-store' });
      if (answer.status === 401 && tokens.value?.refreshToken) {
        // A failed renewal signs out, which aborts `signal`.
        if (await refresh()) continue;
        return;
      }
      if (!answer.ok || !answer.body) {
        // 429: the server says when to come back.
        const retryAfter = Number(answer.headers.get('retry-after'));
        if (retryAfter > 0) wait = retryAfter * 1000;
        throw new Error(`HTTP ${answer.status}`);
      }
      failures = 0;
      setOpen(true);
      await readEventStream(answer.body, {
        onRetry: (ms) => (retryMs = ms),
        onEvent: (event) => {
          if (event.id) lastEventId = event.id;
          for (const listener of listeners) listener(event);
        },
      });
    } catch {
      // A refused or broken stream: wait longer each time in a row.
      failures += 1;
    }
    setOpen(false);
    if (signal.aborted) return;
    // An ended stream (token expired, server restarting, family moved): come back after the server's retry time.
    await sleep(Math.max(wait ?? 0, backoffMs(failures, retryMs)), signal);
  }
}

/** Starts following while someone is signed in, and stops at sign-out. */
export function followLiveEvents(): void {
  const signedIn = computed(() => Boolean(tokens.value));
  effect(() => {
    if (!signedIn.value) return;
    const stop = new AbortController();
    void follow(stop.signal);
    return () => stop.abort();
  });
}

/**
 * Calls `reload` when an event that `prefixes` name arrives (see live.ts, concerns), and after a
 * `reset`, while the component is shown. Several events close together make one call.
 */
export function useLiveEvents(prefixes: readonly KindPattern[], reload: () => unknown): void {
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const listener: Listener = (event) => {
      if (!concerns(prefixes, event)) return;
      clearTimeout(timer);
      timer = setTimeout(() => void reload(), COALESCE_MS);
    };
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      clearTimeout(timer);
    };
  }, []);
}

/**
 * Calls `reread(event)` for each event that `prefixes` name, while the component is shown: the
 * event's ids and `read` path say which one thing to read again (a link's job, say). Events close
 * together with the same `read` make one call, with the last of them. A `reset` (events were
 * missed) calls `reread(undefined)`: read everything again.
 */
export function useLiveReads<P extends KindPattern>(prefixes: readonly P[], reread: (event: EventsNamed<P> | undefined) => unknown): void {
  useEffect(() => {
    const timers = new Map<string | undefined, ReturnType<typeof setTimeout>>();
    const listener: Listener = (event) => {
      if (!concerns(prefixes, event)) return;
      // `concerns` let through the kinds `prefixes` name, and `reset`.
      const named = event.kind === 'reset' ? undefined : (event as EventsNamed<P>);
      const read = named && 'read' in named ? named.read : undefined;
      clearTimeout(timers.get(read));
      timers.set(
        read,
        setTimeout(() => {
          timers.delete(read);
          void reread(named);
        }, COALESCE_MS),
      );
    };
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      for (const timer of timers.values()) clearTimeout(timer);
    };
  }, []);
}

/** Whether the event stream is open now (`data-live`, set above): pages poll only while it is not. */
const liveOpen = (): boolean => document.documentElement.dataset.live === 'open';

/** How often a page reads again what it waits for while the live events are not flowing. */
const POLL_MS = 4_000;

/**
 * While `waiting` (a sign-in or a copy under way), calls `reread` every few seconds when the event
 * stream is not open: live events are the way changes arrive, this is the fallback.
 */
export function usePollWhileWaiting(waiting: boolean, reread: () => unknown): void {
  useEffect(() => {
    if (!waiting) return;
    const timer = setInterval(() => {
      if (!liveOpen()) void reread();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [waiting]);
}
