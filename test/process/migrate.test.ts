import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createDeployment, type Deployment } from '../support/deployment.js';
import { runCli, runScript, type CliProcess } from '../support/processes.js';
import { MIGRATION_NAMES } from '../../src/db/migrate.js';
import { testDialect } from '../support/test-database.js';

const PROCESSES = 4;

interface Run {
  startedAt: number;
  endedAt: number;
  applied: string[];
}

function overlappingPairs(runs: Run[]): number {
  let pairs = 0;
  for (const [i, a] of runs.entries()) {
    for (const b of runs.slice(i + 1)) if (a.startedAt < b.endedAt && b.startedAt < a.endedAt) pairs += 1;
  }
  return pairs;
}

/** Polls `done` until it holds; fails with the process's output after `timeoutMs`. */
async function waitFor(done: () => boolean, proc: CliProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline || proc.child.exitCode !== null) {
      throw new Error(`process did not get ready:\n${proc.stderr()}${proc.stdout()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe(`migrations on ${testDialect()}`, () => {
  let deployment: Deployment | undefined;
  afterEach(async () => {
    await deployment?.close();
    deployment = undefined;
  });

  async function migrationNames(d: Deployment): Promise<string[]> {
    const rows = await d
      .store()
      .db.selectFrom(sql.table('kysely_migration').as('m'))
      .select(sql.ref<string>('name').as('name'))
      .execute();
    return rows.map((r) => r.name);
  }

  it(`${PROCESSES} processes migrating one empty database at the same moment apply each migration once`, async () => {
    deployment = await createDeployment();
    const procs = Array.from({ length: PROCESSES }, () =>
      runScript('test/support/migrate-at.ts', [], deployment!.env, { stdin: true }),
    );
    // Every process started and connected; then all are told to go at once.
    await Promise.all(procs.map((p) => waitFor(() => p.stdout().includes('ready\n'), p, 60_000)));
    for (const p of procs) p.child.stdin?.write('go\n');
    const exits = await Promise.all(procs.map((p) => p.exited));
    exits.forEach((exit, i) => expect(exit, procs[i]!.stderr()).toEqual({ code: 0, signal: null }));

    const runs = procs.map((p) => JSON.parse(p.stdout().split('\n')[1]!) as Run);
    // Some of them ran at the same time, or this would prove nothing about the lock.
    expect(overlappingPairs(runs), JSON.stringify(runs)).toBeGreaterThan(0);
    expect(runs.flatMap((r) => r.applied)).toEqual(MIGRATION_NAMES);
    expect(await migrationNames(deployment)).toEqual(MIGRATION_NAMES);
  });

  it('`cardshelf migrate` applies what is pending, then finds nothing to do', async () => {
    deployment = await createDeployment();
    const first = runCli(['migrate'], deployment.env);
    expect(await first.exited, first.stderr()).toEqual({ code: 0, signal: null });
    expect(first.stderr()).toContain('migration 002-media: Success');
    const second = runCli(['migrate'], deployment.env);
    expect(await second.exited, second.stderr()).toEqual({ code: 0, signal: null });
    expect(second.stderr()).toContain('migrations: already up to date');
    expect(await migrationNames(deployment)).toEqual(MIGRATION_NAMES);
  });
});
