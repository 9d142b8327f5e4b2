/**
 * The `cardshelf` command run from the TypeScript sources (`tsx src/main.ts ...`, `npm run dev`),
 * like bin/cardshelf.js runs it from dist/: the benchmark and development use the working tree,
 * not a build that may be older. tsx only transforms modules as they load.
 */
import { main } from './cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`cardshelf: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
