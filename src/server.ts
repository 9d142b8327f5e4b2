import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import type { Config } from './config.js';
import { buildApp } from './app.js';
import { loadOrCreateSigningKey } from './auth/local-issuer.js';
import { migrateToLatest } from './db/migrate.js';
import { openStore } from './db/store.js';
import { boundHeapGrowth } from './heap-growth.js';

const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** A worker that dies sooner than this after its start is failing to start, not crashing. */
const MIN_WORKER_LIFETIME_MS = 5_000;

export interface ServeOptions {
  /** Processes serving the port (node:cluster); 1 serves from this process. */
  workers?: number;
}

/**
 * Serves until SIGTERM or SIGINT: then stops accepting connections, lets requests in flight
 * finish, closes the database, and exits 0; or exits 1 when they take longer than
 * SHUTDOWN_DEADLINE_MS. With `workers` > 1 this process becomes a
 * supervisor of that many worker processes, which run this same command.
 */
export async function serve(config: Readonly<Config>, opts: ServeOptions = {}): Promise<void> {
  const workers = opts.workers ?? 1;
  if (workers > 1 && cluster.isPrimary) return supervise(config, workers);
  boundHeapGrowth({ execArgv: process.execArgv, nodeOptions: config.nodeOptions });

  const app = await buildApp(config);
  let closing = false;
  // Closing the server ends the keep-alive connections idle at that moment, not those still
  // answering a request: left open, each would hold the exit back up to keepAliveTimeout. So
  // once shutting down, every response ends its connection.
  // `done`, not async: it runs for every answer and waits for nothing.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  await app.listen({ port: config.port, host: config.host });

  for (const signal of SHUTDOWN_SIGNALS) {
    process.once(signal, () => {
      if (closing) return;
      closing = true;
      app.log.info({ signal, deadlineMs: config.shutdownDeadlineMs }, 'shutting down');
      // Requests that outlast the deadline are cut off: an orchestrator waits for the exit.
      setTimeout(() => {
        app.log.error({ deadlineMs: config.shutdownDeadlineMs }, 'shutdown deadline passed; exiting with requests unfinished');
        process.exit(1);
      }, config.shutdownDeadlineMs).unref();
      app.close().then(
        () => process.exit(0),
        (err: unknown) => {
          app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}


/**
 * The cluster's primary: prepares what every worker would otherwise race to create (the schema,
 * the local issuer's key), forks the workers, replaces one that crashes, and on SIGTERM or
 * SIGINT passes the signal on and exits when all have finished. The workers share the listening
 * socket; the primary hands connections out in turn.
 */
async function supervise(config: Readonly<Config>, count: number): Promise<void> {
  // The same logger and line shape as the workers' (Fastify's pino), for the supervisor's events.
  const log = pino({ level: config.logLevel });
  const store = openStore(config.database);
  try {
    await migrateToLatest(store);
  } finally {
    await store.db.destroy();
  }
  if (config.auth.mode === 'local') await loadOrCreateSigningKey(config.auth.keyFile);

  let closing = false;
  const startedAt = new Map<Worker, number>();
  const fork = (): void => {
    startedAt.set(cluster.fork(), Date.now());
  };

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (closing) {
      // A worker cut off by its shutdown deadline (exit 1) fails the whole shutdown; one still
      // starting when the signal came dies of it (no code), which is no failure.
      if (code !== null && code !== 0) process.exitCode = 1;
      // process.exitCode: 1 if the supervisor gave up on a failing worker or one failed, else 0.
      if (startedAt.size === 0) process.exit();
      return;
    }
    log.error({ worker: worker.process.pid, code, signal }, 'worker exited');
    if (lived < MIN_WORKER_LIFETIME_MS) {
      // It would only fail again: stop everything and let the operator see why.
      closing = true;
      for (const w of startedAt.keys()) w.process.kill('SIGTERM');
      process.exitCode = 1;
      if (startedAt.size === 0) process.exit();
      return;
    }
    fork();
  });

  for (const signal of SHUTDOWN_SIGNALS) {
    process.once(signal, () => {
      if (closing) return;
      closing = true;
      log.info({ signal, workers: startedAt.size }, 'shutting down');
      for (const w of startedAt.keys()) w.process.kill('SIGTERM');
    });
  }

  for (let i = 0; i < count; i++) fork();
  log.info({ workers: count, port: config.port }, 'workers started');
}
