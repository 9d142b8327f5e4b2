import { readFile } from 'node:fs/promises';
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
