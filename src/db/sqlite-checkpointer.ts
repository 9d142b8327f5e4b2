import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * SQLite in WAL mode copies the log back into the database file (a checkpoint) when the log
 * passes 1,000 pages, inside whichever commit crossed the line, and a checkpoint syncs the file
 * to disk. better-sqlite3 runs statements on the calling thread, so that one commit held the
 * event loop for the sync: on the wishlist PUT benchmark 1% of commits took 21-133 ms and made
 * 72% of all commit time (median commit 44 µs), and every request in flight waited behind them.
 *
 * So the connection that serves requests checkpoints only as a backstop (`BACKSTOP_PAGES`), and
 * a worker thread with a connection of its own checkpoints every `intervalMs`. Its checkpoints
 * are PASSIVE: they copy what no reader still needs and never wait for, or block, a writer;
 * once the log is copied in full, the next commit starts it again from its beginning, so the
 * file stays small. Several processes on one file each run one; SQLite lets one checkpoint run
 * at a time and the others return at once.
 */
export const BACKSTOP_PAGES = 20_000;

export interface Checkpointer {
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  file: string;
  intervalMs: number;
  busyTimeoutMs: number;
  /** A checkpoint that failed (the file moved, the disk full): reported, tried again later. */
  onError: (message: string) => void;
}

/**
 * The worker's code, run as a script (`eval`): a file of its own would be TypeScript under the
 * dev server and the tests, which a worker thread cannot load, and JavaScript in dist/. It is
 * given the path of better-sqlite3 as this process resolved it.
 */
const WORKER_SCRIPT = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.sqlite);
const db = new SQLite(workerData.file, { timeout: workerData.busyTimeoutMs, fileMustExist: true });
let stopped = false;
const tick = () => {
  if (stopped) return;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
  }
  timer = setTimeout(tick, workerData.intervalMs);
};
let timer = setTimeout(tick, workerData.intervalMs);
parentPort.on('message', () => {
  stopped = true;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

export function startCheckpointer(options: CheckpointerOptions): Checkpointer {
  const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SCRIPT, {
    eval: true,
    workerData: { sqlite, file: options.file, intervalMs: options.intervalMs, busyTimeoutMs: options.busyTimeoutMs },
  });
  // It never keeps the process alive: the backstop checkpoints if it is gone.
  worker.unref();
  worker.on('message', (message: { error?: string }) => {
    if (message.error) options.onError(message.error);
  });
  worker.on('error', (err) => options.onError(err.message));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        void exited.then(resolve);
        // Waited for now: unreferenced, a process with nothing else to do would end mid-wait.
        worker.ref();
        worker.postMessage('stop');
        // A worker stuck in a checkpoint past its busy timeout is ended all the same.
        setTimeout(() => void worker.terminate(), options.busyTimeoutMs + 1_000).unref();
      });
      return stopping;
    },
  };
}
