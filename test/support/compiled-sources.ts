/**
 * vitest's global setup for the integration projects: src/ transpiled to JavaScript once per run,
 * so that the `cardshelf` processes tests start (servers, CLI commands: about two hundred a run)
 * load plain modules instead of each compiling the sources again through tsx. That cost about
 * 0.8 s of CPU more per server start (`node --import tsx src/main.ts serve` against the built
 * tree, on this project's two-core machine), most of the process tests' time.
 *
 * Still the sources, never a stale build: the files are transpiled from src/ at the start of each
 * run, without type checks (`npm test` type-checks first), with the TypeScript compiler that
 * builds dist/. They go to a folder of this run beside src/ (`.test-build-*`, git-ignored) so
 * that the sources' paths relative to themselves (`../package.json`, `../../dist/app/`) hold as
 * they do from dist/, and two runs at once never share one. processes.ts reads the folder with
 * `inject('compiledSources')`.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { TestProject } from 'vitest/node';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCES = path.join(ROOT, 'src');
const PREFIX = '.test-build-';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder of this run's transpiled src/ (see compiled-sources.ts). */
    compiledSources: string;
  }
}

export async function setup(project: TestProject): Promise<() => Promise<void>> {
  await removeAbandoned();
  const out = path.join(ROOT, `${PREFIX}${process.pid}-${project.name}`);
  await rm(out, { recursive: true, force: true });
  await transpileTree(SOURCES, out, compilerOptions());
  project.provide('compiledSources', out);
  return () => rm(out, { recursive: true, force: true });
}

/** The options of tsconfig.json, for emitting ES modules file by file. */
function compilerOptions(): ts.CompilerOptions {
  const read = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), (file) => ts.sys.readFile(file));
  if (read.error) throw new Error(`compiled-sources: ${ts.flattenDiagnosticMessageText(read.error.messageText, '\n')}`);
  const { options } = ts.parseJsonConfigFileContent(read.config, ts.sys, ROOT);
  // NodeNext decides ESM or CommonJS from package.json, which a single-file transpile cannot read;
  // the package is ESM ("type": "module"), so the emit is ESM.
  return { ...options, module: ts.ModuleKind.ESNext, sourceMap: false, inlineSourceMap: true, noEmit: false };
}

async function transpileTree(from: string, to: string, options: ts.CompilerOptions): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    if (entry.isDirectory()) {
      await transpileTree(source, path.join(to, entry.name), options);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      // The source map names the file in src/, so stack traces point at it.
      const compilerOptions = { ...options, sourceRoot: `${from}/` };
      const { outputText } = ts.transpileModule(await readFile(source, 'utf8'), { compilerOptions, fileName: source });
      await writeFile(path.join(to, entry.name.replace(/\.ts$/, '.js')), outputText);
    }
  }
}

/** Folders of runs that ended without their teardown (killed): their process is gone. */
async function removeAbandoned(): Promise<void> {
  for (const name of await readdir(ROOT)) {
    const pid = Number(/^\.test-build-(\d+)-/.exec(name)?.[1]);
    if (pid && !alive(pid)) await rm(path.join(ROOT, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
