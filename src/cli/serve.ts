import type { Command } from 'commander';
import { positiveInt } from './option-parsers.js';
import { EXIT, type Run } from './run.js';

/** `cardshelf serve`. */
export function serveCommand(program: Command, run: Run): void {
  program
    .command('serve')
    .description('start the server (PORT, DATA_DIR, DATABASE_URL, ... from the environment)')
    .option('--workers <n>', 'processes sharing the port (node:cluster)', positiveInt, 1)
    .action(run(async (config, opts: { workers: number }) => {
      // Loaded when run: the server (and the demo seed) bring Fastify, sharp and the rest, which
      // would double the memory of the data commands (export, import) that never use them.
      const { serve } = await import('../server.js');
      await serve(config, { workers: opts.workers });
      return EXIT.OK;
    }));
}
