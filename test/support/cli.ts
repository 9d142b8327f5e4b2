// The `cardshelf` command run from the TypeScript sources (node --import tsx), as bin/cardshelf.js
// runs it from dist/: tests that start real processes test the code under test, never a stale build.
import { main } from '../../src/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`cardshelf: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
