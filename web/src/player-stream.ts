/**
 * A browser player's connection to the server with its own credential alone (player-credential.ts):
 * its API client and its event stream.
 */
import createClient from 'openapi-fetch';
import type { paths } from './api-types.js';
import { backoffMs, DEFAULT_RETRY_MS, readEventStream, type LiveEvent } from './live.js';
import type { PlayerCredential } from './player-credential.js';

/** The typed API client with the player's token (no refresh: the credential lasts a year, and a 401 means it was removed). */
export const playerApi = (credential: PlayerCredential) =>
  createClient<paths>({
    baseUrl: location.origin,
    fetch: (request: Request) => {
      request.headers.set('authorization', `Bearer ${credential.accessToken}`);
      return fetch(request);
    },
  });

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

export interface PlayerStreamCallbacks {
  onEvent(event: LiveEvent): void;
  /** The stream opened (again): the page reports its status, so the family sees it back. */
  onOpen(): void;
  /** The credential was refused (the player was removed). */
  onRevoked(): void;
}

/**
 * Follows the family's events with the player's credential until `signal` aborts, resuming after
 * a drop from the last event's id after live.ts's growing wait, as events.ts does for members.
 */
export async function followAsPlayer(credential: PlayerCredential, signal: AbortSignal, callbacks: PlayerStreamCallbacks): Promise<void> {
  let lastEventId: string | undefined;
  let retryMs = DEFAULT_RETRY_MS;
  let failures = 0;
  while (!signal.aborted) {
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${credential.accessToken}` };
      if (lastEventId) headers['last-event-id'] = lastEventId;
      const answer = await fetch('/user/family/events', { headers, signal, cache: 'no-store' });
      if (answer.status === 401) return callbacks.onRevoked();
      if (!answer.ok || !answer.body) throw new Error(`HTTP ${answer.status}`);
      failures = 0;
      callbacks.onOpen();
      await readEventStream(answer.body, {
        onRetry: (ms) => (retryMs = ms),
        onEvent: (event) => {
          if (event.id) lastEventId = event.id;
          callbacks.onEvent(event);
        },
      });
    } catch {
      failures += 1;
    }
    if (signal.aborted) return;
    await sleep(backoffMs(failures, retryMs), signal);
  }
}
