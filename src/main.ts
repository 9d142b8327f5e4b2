/**
 * The `cardshelf` command run from the TypeScript sources (`node --import tsx`), like
 * bin/cardshelf.js runs it from dist/: the benchmark measures the working tree, not a build that
 * may be older. tsx only transforms modules as they load; the code that serves is the same.
 */
import { main } from '../src/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`cardshelf: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
