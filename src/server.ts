import type { Config } from './config.js';
import { buildApp } from './app.js';

const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Serves until SIGTERM or SIGINT: then stops accepting connections, lets requests in flight
 * finish, closes the database, and exits 0.
 */
export async function serve(config: Readonly<Config>): Promise<void> {
  const app = await buildApp(config);
  await app.listen({ port: config.port, host: config.host });

  let closing = false;
  for (const signal of SHUTDOWN_SIGNALS) {
    process.once(signal, () => {
      if (closing) return;
      closing = true;
      app.log.info({ signal }, 'shutting down');
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
