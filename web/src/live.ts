import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { components } from './api-types.js';

/**
 * The pieces of following GET /user/family/events that need no browser (test/unit covers them):
 * reading a `text/event-stream` body into events, the wait before a reconnect, and which events a
 * page cares about. events.ts connects them to the signed-in app.
 */

/**
 * One event of the stream (docs/api.md, "Live events"): its data as the server's catalogue
 * (`LiveEvent`, one schema per kind) says, and its id. `reset` carries only its kind.
 */
export type LiveEvent = components['schemas']['LiveEvent'] & { id?: string };
export type LiveEventKind = LiveEvent['kind'];

/** The first parts of the kinds (`group` of `group.created`). */
type KindFamily = LiveEventKind extends infer K ? (K extends `${infer F}.${string}` ? F : never) : never;
/** What a page names: a kind, or the first part of kinds followed by a dot (`group.`). */
export type KindPattern = LiveEventKind | `${KindFamily}.`;
/** The events a pattern names, typed by their kinds. */
export type EventsNamed<P extends KindPattern> = P extends `${infer F}.` ? Extract<LiveEvent, { kind: `${F}.${string}` }> : Extract<LiveEvent, { kind: P }>;

export interface StreamCallbacks {
  onEvent(event: LiveEvent): void;
  /** The server's `retry:` field, in milliseconds. */
  onRetry(ms: number): void;
}

/** Reads the body until it ends (resolves) or breaks (rejects); every complete event is passed on as it arrives. */
export async function readEventStream(body: ReadableStream<Uint8Array>, callbacks: StreamCallbacks): Promise<void> {
  const parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      const event = toLiveEvent(message);
      if (event) callbacks.onEvent(event);
    },
    onRetry: (ms) => callbacks.onRetry(ms),
  });
  // `stream: true`: a character split between two chunks is decoded whole.
  const decoder = new TextDecoder();
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    parser.feed(decoder.decode(value, { stream: true }));
  }
}

/** The event, or undefined for data that is not the server's (not JSON, no `kind`). */
function toLiveEvent(message: EventSourceMessage): LiveEvent | undefined {
  try {
    const data = JSON.parse(message.data) as Partial<LiveEvent> | null;
    return typeof data?.kind === 'string' ? ({ ...data, id: message.id } as LiveEvent) : undefined;
  } catch {
    return undefined;
  }
}

/** The server asks for 5 s (`retry:`); the longest wait between two tries. */
export const DEFAULT_RETRY_MS = 5_000;
const MAX_RETRY_MS = 60_000;

/**
 * The wait before try number `failures` + 1: the server's retry time, doubled with each failure in
 * a row up to a minute, with up to a fifth more at random so that a restarted server is not met
 * by every tab at the same moment. `random` is Math.random's range.
 */
export function backoffMs(failures: number, retryMs = DEFAULT_RETRY_MS, random = Math.random()): number {
  const base = Math.min(retryMs * 2 ** Math.max(0, failures - 1), MAX_RETRY_MS);
  return Math.round(base * (1 + random / 5));
}

/**
 * Whether a page showing what `prefixes` name (kinds, or their first part followed by a dot, as
 * `group.`) must refetch: those events, and `reset` (events were missed: refetch everything).
 */
export const concerns = (prefixes: readonly string[], event: { kind: string }): boolean =>
  event.kind === 'reset' || prefixes.some((p) => (p.endsWith('.') ? event.kind.startsWith(p) : event.kind === p));
