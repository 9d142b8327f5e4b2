#!/usr/bin/env node
// npm's `prepare` script: compiles src/ to dist/ when TypeScript is installed (`npm ci`, a
// development install). A production install (`npm ci --omit=dev`) has no TypeScript: it is made
// on a tree already built (`npm run build`, or the Dockerfile's build stage) and keeps that dist/.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  if (existsSync(new URL('../dist/cli.js', import.meta.url))) process.exit(0);
  process.stderr.write(
    'cardshelf: dist/ is missing and TypeScript is not installed: build first (npm ci && npm run build), then npm ci --omit=dev\n',
  );
  process.exit(1);
}
const { status } = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
process.exit(status ?? 1);
