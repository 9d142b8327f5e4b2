/**
 * The Cardshelf under test, as child processes: the `cardshelf` command (the sources through tsx,
 * or the build), `cardshelf serve` started and awaited until /healthz answers, and the CPU
 * profiles of its processes through bench/profiler-hook.ts.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Options } from './options.js';
import { benchDir, rootDir } from './paths.js';
import { summariseFiles, type Summary } from './profile-summary.js';

/** A TCP port free on 127.0.0.1 when asked: for a server that must know its own address. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** Builds the tree at `root` into its dist/ (what `--built` runs), with that tree's own compiler. */
export async function buildTree(root: string): Promise<void> {
  await promisify(execFile)(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root });
}

/**
 * `node [--import tsx] <cardshelf> ...args`: the sources through tsx, or the build, of the tree
 * at `root` (this one, or the revision of --against).
 */
function cardshelfCommand(opts: Options, root: string, nodeFlags: string[], args: string[]): string[] {
  return opts.built
    ? [...nodeFlags, path.join(root, 'bin/cardshelf.js'), ...args]
    : ['--import', 'tsx', ...nodeFlags, path.join(root, 'src', 'main.ts'), ...args];
}

/** Runs the cardshelf command of `root` to its end; its stderr (progress) goes to ours. */
export async function runCardshelf(opts: Options, env: NodeJS.ProcessEnv, args: string[], root = rootDir): Promise<number> {
  const child = spawn(process.execPath, cardshelfCommand(opts, root, [], args), {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code ?? 1;
}

export interface Server {
  child: ChildProcess;
  /** Where the profiler hook writes (with --cpu-prof). */
  profileDir: string | undefined;
  base: string;
  port: number;
  stderr: string[];
  /** The server's database on PostgreSQL (lock waits are sampled there). */
  databaseUrl: string | undefined;
  stop(): Promise<void>;
}

export async function startServer(
  opts: Options,
  env: NodeJS.ProcessEnv,
  profileDir: string | undefined,
  root = rootDir,
): Promise<Server> {
  const port = Number(env.PORT);
  // The hook is TypeScript: with the build, tsx is loaded for it alone.
  const hook = ['--import', path.join(benchDir, 'profiler-hook.ts')];
  const nodeFlags = profileDir ? (opts.built ? ['--import', 'tsx', ...hook] : hook) : [];
  const args = ['serve', ...(opts.workers > 1 ? ['--workers', String(opts.workers)] : [])];
  const child = spawn(process.execPath, cardshelfCommand(opts, root, nodeFlags, args), {
    cwd: root,
    env: profileDir ? { ...env, BENCH_PROFILE_DIR: profileDir } : env,
    // The server's log lines are written as in production, to a pipe (what a container's log
    // driver or a service manager reads), and dropped here.
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.resume();
  const stderr: string[] = [];
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr.push(chunk);
    if (stderr.length > 200) stderr.shift();
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`the server exited while starting:\n${stderr.join('')}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the server did not answer within 60 s:\n${stderr.join('')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    profileDir,
    base,
    port,
    stderr,
    databaseUrl: env.DATABASE_URL,
    async stop() {
      if (exited) return;
      const done = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await done;
      clearTimeout(timer);
    },
  };
}

/** Starts the profiler hook in every server process; stop() collects and summarises. */
export async function startProfiles(pids: number[], dir: string): Promise<{ stop(): Promise<Summary> }> {
  const before = new Set(await readdir(dir));
  for (const pid of pids) process.kill(pid, 'SIGUSR2');
  return {
    async stop() {
      for (const pid of pids) process.kill(pid, 'SIGUSR2');
      const deadline = Date.now() + 30_000;
      for (;;) {
        const fresh = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
        if (fresh.length >= pids.length || Date.now() > deadline) {
          return summariseFiles(fresh.map((f) => path.join(dir, f)), 25);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    },
  };
}
