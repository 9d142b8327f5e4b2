import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';

const run = promisify(execFile);

/**
 * A PostgreSQL server of its own for a test that stops, restarts and kills it: the machine's
 * shared server must not be touched (other suites use it at the same time). It is made with the
 * machine's PostgreSQL binaries, as the `postgres` system user (initdb refuses root), in a
 * temporary directory, listening on a free loopback port.
 */
export interface PrivatePostgres {
  /** postgres://chaos:...@127.0.0.1:<port>/cardshelf: a database the instances use. */
  readonly url: string;
  readonly port: number;
  /** A superuser session on the server (for pg_terminate_backend and checks). */
  admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T>;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its files. */
  destroy(): Promise<void>;
}

const PASSWORD = 'chaos-password';

/** The machine's PostgreSQL binaries, newest first; undefined when there are none. */
export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] && path.join(root, versions[0], 'bin');
}

/** Why a private server cannot be made here, or undefined when it can. */
export function privatePostgresUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (to run initdb as the postgres user)';
  if (!postgresBinaries()) return 'no PostgreSQL binaries under /usr/lib/postgresql';
  return undefined;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinaries();
  if (!bin) throw new Error('no PostgreSQL binaries');
  const { stdout: uid } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  const dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-pg-'));
  await chown(dir, Number(uid), Number(gid));
  await chmod(dir, 0o700);
  const data = path.join(dir, 'data');
  const pwfile = path.join(dir, 'pw');
  await writeFile(pwfile, PASSWORD);
  await chown(pwfile, Number(uid), Number(gid));
  const asPostgres = (cmd: string, args: string[]) =>
    run('runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args], { cwd: dir, timeout: 120_000 });

  await asPostgres('initdb', ['-D', data, '-U', 'chaos', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=60 -c fsync=off`;
  const start = async (): Promise<void> => {
    await asPostgres('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast'): Promise<void> => {
    await asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  };
  await start();

  const base = `postgres://chaos:${PASSWORD}@127.0.0.1:${port}`;
  const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: `${base}/postgres`, connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  await admin((c) => c.query('create database cardshelf'));

  return {
    url: `${base}/cardshelf`,
    port,
    admin,
    stop,
    start,
    async destroy() {
      await stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
