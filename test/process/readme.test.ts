import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { startServer, type ServerProcess } from '../support/processes.js';
import { testDialect } from '../support/test-database.js';

/**
 * The README's "Try it", run from the README's own text: a server is started as `npm start`
 * would (from the sources, on a free port), then every command of the block runs in bash. Two
 * substitutions only: `npx cardshelf` is the command from the sources (a build in dist/ may be
 * stale) and `localhost:8080` the test server. Each `curl` must answer JSON with a 2xx, or
 * with the status its comment names ("...: 400").
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = await readFile(path.join(ROOT, 'README.md'), 'utf8');

/** The commands of the first `sh` block under `heading`, continuation lines joined. */
export function shellCommands(markdown: string, heading: string): string[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith(`${heading}\n`));
  const block = section && /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error(`README.md has no sh block under '## ${heading}'`);
  return block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

/** A trailing comment (`   # text`, no quotes in it) and the status it names, if any. */
function splitComment(command: string): { command: string; status?: number } {
  const match = /\s+#\s[^'"]*$/.exec(command);
  if (!match) return { command };
  const status = /:\s*(\d{3})\s*$/.exec(match[0])?.[1];
  return { command: command.slice(0, match.index), status: status ? Number(status) : undefined };
}

function bash(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    // 'close', not 'exit': the output is all read by then.
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// It starts processes (seed, serve) and runs the whole block: minutes on a busy machine, never a hang.
describe(`README "Try it" on ${testDialect()}`, { timeout: 120_000 }, () => {
  let deployment: Deployment;
  let server: ServerProcess;
  beforeAll(async () => {
    deployment = await createDeployment();
    server = await startServer(deployment.env);
  });
  afterAll(async () => {
    await server?.stop('SIGKILL', 0);
    await deployment?.close();
  });

  it('every command of the block works as its text says', async () => {
    const commands = shellCommands(README, 'Try it');
    const [setToken, ...curls] = commands;
    expect(setToken).toMatch(/^TOKEN=\$\(npx cardshelf seed --demo\)/);
    expect(curls.length).toBeGreaterThanOrEqual(3);
    const sources = `node --import tsx ${JSON.stringify(path.join(ROOT, 'src/main.ts'))}`;
    const base = new URL(server.url).host;

    const seeded = await bash(`${setToken!.replaceAll('npx cardshelf', sources)}\nprintf %s "$TOKEN"`, deployment.env);
    expect(seeded.code, seeded.stderr).toBe(0);
    const token = seeded.stdout;
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    for (const line of curls) {
      expect(line).toMatch(/^curl /);
      const { command, status } = splitComment(line);
      const script = `${command.replaceAll('localhost:8080', base)} -w '\\n%{http_code}'`;
      const r = await bash(script, { ...deployment.env, TOKEN: token });
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      const newline = r.stdout.lastIndexOf('\n');
      const code = Number(r.stdout.slice(newline + 1));
      const body: unknown = JSON.parse(r.stdout.slice(0, newline));
      if (status) expect(code, line).toBe(status);
      else expect(code >= 200 && code < 300, `${line}: ${code} ${JSON.stringify(body)}`).toBe(true);
    }
  });

  it('the token line and the command table name commands that exist', async () => {
    const tokenLine = /`npx cardshelf (token [^`]+)`/.exec(README)?.[1];
    expect(tokenLine).toBeDefined();
    const listed = [...README.matchAll(/^\| `cardshelf (\w+)[^`]*` \|/gm)].map((m) => m[1]!);
    expect(new Set(listed)).toEqual(new Set(['serve', 'migrate', 'token', 'seed', 'media', 'export', 'import', 'user', 'client', 'link']));
    const sources = `node --import tsx ${JSON.stringify(path.join(ROOT, 'src/main.ts'))}`;
    const r = await bash(`${sources} ${tokenLine!}`, deployment.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
  });
});
