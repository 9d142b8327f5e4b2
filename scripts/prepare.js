#!/usr/bin/env node
// npm's `prepare` script: compiles src/ to dist/ and builds the web app (web/) into dist/app when
// the development tools are installed (`npm ci`, a development install). A production install
// (`npm ci --omit=dev`) has neither TypeScript nor Vite: it is made on a tree already built
// (`npm run build && npm run build:web`, or the Dockerfile's build stage) and keeps that dist/.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
let tsc;
let vite;
try {
  tsc = require.resolve('typescript/bin/tsc');
  // Vite's package exports do not include its bin; its package.json names it.
  const vitePackage = require.resolve('vite/package.json');
  vite = path.join(path.dirname(vitePackage), require(vitePackage).bin.vite);
} catch {
  if (existsSync(new URL('../dist/cli.js', import.meta.url)) && existsSync(new URL('../dist/app/index.html', import.meta.url))) process.exit(0);
  process.stderr.write(
    'cardshelf: dist/ is missing and TypeScript or Vite is not installed: build first (npm ci, which builds both), then npm ci --omit=dev\n',
  );
  process.exit(1);
}
for (const args of [
  [tsc, '-p', 'tsconfig.build.json'],
  [vite, 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'],
]) {
  const { status } = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
}
