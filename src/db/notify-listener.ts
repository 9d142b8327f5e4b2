import type pg from 'pg';
import type { PostgresConfig } from './config.js';
import { pgDriver } from './pg-driver.js';

/** How long the listener waits before connecting again after a failure (doubling up to the last). */
const RETRY_DELAYS_MS = [100, 500, 1_000, 2_000, 5_000];

export interface NotifyListener {
  close(): Promise<void>;
}

/**
 * PostgreSQL LISTEN on one dedicated connection (pg Client, outside the pool: a LISTEN lasts as
 * long as its connection). `onNotify` runs for every notification on `channel`; `onListening`
 * runs each time the LISTEN starts (the first time, and after a lost connection is made again),
 * since notifications sent before are not received: the caller reads what it may have missed.
 * Reconnects until closed.
 */
export function listenForNotifications(
  config: Pick<PostgresConfig, 'url' | 'connectTimeoutMs'>,
  channel: string,
  handlers: { onNotify: () => void; onListening: () => void; onError: (err: unknown) => void },
): NotifyListener {
  let closed = false;
  let client: pg.Client | undefined;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  /** The connection being made, which `close` waits for (its session must not outlive it). */
  let connecting: Promise<void> | undefined;

  const connect = async (): Promise<void> => {
    const next = new (pgDriver().Client)({ connectionString: config.url, connectionTimeoutMillis: config.connectTimeoutMs });
    next.on('notification', (message) => {
      if (message.channel === channel) handlers.onNotify();
    });
    next.on('error', (err) => lost(next, err));
    next.on('end', () => lost(next, new Error('listener connection ended')));
    try {
      await next.connect();
      await next.query(`LISTEN ${pgDriver().escapeIdentifier(channel)}`);
    } catch (err) {
      lost(next, err);
      return;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    failures = 0;
    handlers.onListening();
  };

  const lost = (which: pg.Client, err: unknown): void => {
    if (closed || (client !== undefined && which !== client)) return;
    client = undefined;
    which.removeAllListeners('end');
    which.on('error', () => {});
    void which.end().catch(() => {});
    handlers.onError(err);
    const delay = RETRY_DELAYS_MS[Math.min(failures, RETRY_DELAYS_MS.length - 1)] ?? 5_000;
    failures++;
    if (retry === undefined) {
      retry = setTimeout(() => {
        retry = undefined;
        connecting = connect();
      }, delay);
    }
  };

  connecting = connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await connecting;
      const open = client;
      client = undefined;
      if (open) {
        open.removeAllListeners('end');
        await open.end().catch(() => {});
      }
    },
  };
}
