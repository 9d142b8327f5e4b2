import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The command from the sources, never a stale build in dist/: transpiled at the start of this run
// (compiled-sources.ts), or through tsx where the run has no such folder (the unit project).
const CLI = path.join(ROOT, 'src/main.ts');
const COMPILED = inject('compiledSources');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A command running in its own process. */
export interface CliProcess {
  readonly child: ChildProcess;
  /** What it has written so far. */
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<Exit>;
  /** Sends `signal` and waits for the exit; SIGKILL if it takes longer than `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<Exit>;
}

export interface ServerProcess extends CliProcess {
  /** http://127.0.0.1:<port> */
  readonly url: string;
}

const running = new Set<ChildProcess>();
// A test run that dies must not leave servers behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Only what Node needs is inherited: a developer's DATABASE_URL or PORT must not leak into a
 * test's process.
 */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
  if (process.env.TMPDIR) base.TMPDIR = process.env.TMPDIR;
  return { ...base, ...env };
}

/** `cardshelf <args>`, from the sources. */
export function runCli(args: string[], env: Record<string, string>): CliProcess {
  return runScript(CLI, args, env);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `cardshelf <args>` as an operator runs it, to its end: its exit code and what it wrote.
 * `stdin`, when given, is written to it and closed (`--password-stdin`).
 */
export async function cli(args: string[], env: Readonly<Record<string, string>>, stdin?: string): Promise<CliResult> {
  const proc = runScript(CLI, args, env, { stdin: stdin !== undefined });
  if (stdin !== undefined) proc.child.stdin!.end(stdin);
  const exit = await proc.exited;
  return { code: exit.code, stdout: proc.stdout(), stderr: proc.stderr() };
}

/**
 * A TypeScript file of this repository, run by Node: a file of src/ from this run's transpiled
 * sources, any other (a test's script) with tsx.
 */
export function runScript(
  file: string,
  args: string[],
  env: Record<string, string>,
  opts: { stdin?: boolean } = {},
): CliProcess {
  const child = spawn(process.execPath, [...nodeArgsFor(path.resolve(ROOT, file)), ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  // 'exit' can come before the last of the child's output has been read from its pipes, so an
  // exit resolves at 'close', once they are drained. A grandchild that inherited the pipes could
  // hold them open past the exit, hence the bound.
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      const drained = setTimeout(() => resolve({ code, signal }), 5_000);
      child.once('close', () => {
        clearTimeout(drained);
        resolve({ code, signal });
      });
    });
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(signal = 'SIGTERM', graceMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function nodeArgsFor(file: string): string[] {
  const fromSources = path.relative(path.join(ROOT, 'src'), file);
  if (COMPILED && !fromSources.startsWith('..')) {
    // Stack traces name the .ts lines, as under tsx.
    return ['--enable-source-maps', path.join(COMPILED, fromSources.replace(/\.ts$/, '.js'))];
  }
  return ['--import', 'tsx', file];
}

const LISTENING = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/;

/**
 * `cardshelf serve [args]` on a free loopback port (PORT=0), resolved once it listens. The port is read
 * from the server's own log line, so parallel tests never race for a port.
 */
export async function startServer(
  env: Record<string, string>,
  opts: { args?: string[]; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const { args = [], timeoutMs = 45_000 } = opts;
  const proc = runCli(['serve', ...args], { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'debug', ...env });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the server did not listen within ${timeoutMs} ms\n${proc.stderr()}${proc.stdout()}`)),
        timeoutMs,
      );
      const look = (): void => {
        const match = LISTENING.exec(proc.stdout());
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      };
      proc.child.stdout?.on('data', look);
      void proc.exited.then((exit) => {
        clearTimeout(timer);
        reject(new Error(`the server exited (${exit.code ?? exit.signal}) before listening\n${proc.stderr()}${proc.stdout()}`));
      });
    });
    return { ...proc, url };
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
}

export interface HttpReply {
  status: number;
  body: any;
  /** Header names in lower case. */
  headers: Record<string, string>;
}

/** One JSON request, bounded in time, as a client would make it. */
export async function http(
  base: string,
  method: string,
  url: string,
  opts: { token?: string; body?: unknown; timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<HttpReply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${url}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: the test shows the text
  }
  return { status: res.status, body, headers: Object.fromEntries(res.headers) };
}
