import http from 'node:http';

/** A client of `GET /user/family/events` for tests: reads the stream as it comes, parses events. */

export interface StreamEvent {
  id: string | undefined;
  event: string;
  data: any;
}

export interface EventStreamClient {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Events received so far, in order. */
  events: StreamEvent[];
  /** Comment lines received so far (heartbeats and notes), without the colon. */
  comments: string[];
  /** Resolves when the server ends the stream (or the connection breaks). */
  ended: Promise<void>;
  isEnded(): boolean;
  /** The first event (from `from` on) for which `match` holds; rejects after `timeoutMs`. */
  waitFor(match: (e: StreamEvent) => boolean, timeoutMs?: number, from?: number): Promise<StreamEvent>;
  /** Stops reading (the socket's buffers fill: a slow reader), and reads again. */
  pause(): void;
  resume(): void;
  close(): void;
  /** The body of a refused stream (a 4xx), parsed. */
  errorBody(): Promise<any>;
}

/** How long an accepted stream may take to say it is connected before it is returned anyway. */
const CONNECTED_WITHIN_MS = 15_000;

export async function openEventStream(
  baseUrl: string,
  token: string,
  opts: { lastEventId?: string; query?: string; headers?: Record<string, string> } = {},
): Promise<EventStreamClient> {
  const url = new URL(`/user/family/events${opts.query ?? ''}`, baseUrl);
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...opts.headers };
  if (opts.lastEventId !== undefined) headers['last-event-id'] = opts.lastEventId;
  const req = http.get(url, { headers, agent: false });
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  const events: StreamEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  let ended = false;
  let buffer = '';
  let body = '';
  const notify = (): void => {
    for (const w of [...waiters]) w();
  };
  const endedPromise = new Promise<void>((resolve) => {
    const done = (): void => {
      ended = true;
      notify();
      resolve();
    };
    res.once('end', done);
    res.once('close', done);
    res.once('error', done);
    req.once('error', done);
  });
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    if (res.statusCode !== 200) {
      body += chunk;
      return;
    }
    buffer += chunk;
    let at: number;
    while ((at = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comments.push(line.slice(1).trim());
        else {
          const colon = line.indexOf(':');
          if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
        }
      }
      if (fields.data !== undefined) events.push({ id: fields.id, event: fields.event ?? 'message', data: JSON.parse(fields.data) });
    }
    notify();
  });

  // The server sends the status before the hub places the stream; what commits in between is
  // not the stream's (a new stream starts from now). A test that writes once this returns expects
  // the stream to carry it: so an accepted stream is returned once the hub said `: connected`
  // (or it ended first).
  if (res.statusCode === 200) {
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (!ended && !comments.includes('connected')) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        resolve();
      }, CONNECTED_WITHIN_MS);
      waiters.add(check);
      check();
    });
  }

  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    events,
    comments,
    ended: endedPromise,
    isEnded: () => ended,
    waitFor(match, timeoutMs = 5000, from = 0) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const found = events.slice(from).find(match);
          if (found) {
            finish();
            resolve(found);
          } else if (ended) {
            finish();
            reject(new Error(`stream ended without the event; got ${JSON.stringify(events)}`));
          }
        };
        const timer = setTimeout(() => {
          finish();
          reject(new Error(`no such event within ${timeoutMs} ms; got ${JSON.stringify(events)}`));
        }, timeoutMs);
        const finish = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    pause: () => res.pause(),
    resume: () => res.resume(),
    close: () => req.destroy(),
    async errorBody() {
      await endedPromise;
      return JSON.parse(body);
    },
  };
}

/** Waits `ms` milliseconds. */
export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
