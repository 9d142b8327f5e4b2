#!/usr/bin/env node
// The `cardshelf` command. The TypeScript sources are compiled to dist/ by `npm ci` (the
// `prepare` script); run `npm run build` after changing them.
import { main } from '../dist/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`cardshelf: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
