/**
 * `npm run bench -- --against <rev>`: this working tree and a git revision, measured alternately
 * in one run, so that the machine's load at the moment weighs on both alike.
 *
 * The revision is exported beside the tree (`git archive` into a temporary directory, which
 * leaves the repository's worktrees alone), with this tree's node_modules hard-linked into it
 * when they hold every package it names (`npm ci` there otherwise). Each side gets a database of
 * its own, seeded by its own `cardshelf seed`, its own server and fixtures. Every scenario then
 * runs `--rounds` times, each round measuring both sides (each against the ceiling replaying its
 * own answer), the order swapped every round; the medians are compared.
 *
 * A scenario that the revision does not serve as this tree does (a 304 before entity tags, a
 * replay before Idempotency-Key) is measured on this tree alone and marked so.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Ceiling } from './ceiling.js';
import { makeFixtures, type Fixtures } from './fixtures.js';
import type { Measured } from './load.js';
import { log } from './log.js';
import type { Options, StoreName } from './options.js';
import { rootDir } from './paths.js';
import { memoryOf } from './process-sampler.js';
import { addRunSections, targetText, writeResultsJson, type Machine } from './report.js';
import { measureCeiling, measureServer, prepareScenario, targetMet, type Prepared } from './run-scenario.js';
import { scenarios, type Scenario } from './scenarios.js';
import { buildTree, freePort, startServer, type Server } from './server.js';
import { seedStore, setupStore, type StoreSetup } from './store.js';

const run = promisify(execFile);

export interface Checkout {
  /** As given (`70f09df`, `main`), and the commit it names. */
  rev: string;
  sha: string;
  root: string;
  cleanup(): Promise<void>;
}

/** The revision's files in a temporary directory, ready to run (see above). */
export async function checkoutRevision(opts: Options, rev: string): Promise<Checkout> {
  const sha = (await run('git', ['rev-parse', '--verify', `${rev}^{commit}`], { cwd: rootDir })).stdout.trim();
  const root = await mkdtemp(path.join(os.tmpdir(), `cardshelf-against-${sha.slice(0, 8)}-`));
  const cleanup = (): Promise<void> => rm(root, { recursive: true, force: true });
  try {
    log(`against: ${rev} (${sha.slice(0, 12)}) into ${root}`);
    const archive = spawn('git', ['archive', '--format=tar', sha], { cwd: rootDir, stdio: ['ignore', 'pipe', 'inherit'] });
    const untar = spawn('tar', ['-x', '-C', root], { stdio: ['pipe', 'inherit', 'inherit'] });
    archive.stdout.pipe(untar.stdin);
    const [[archived], [untarred]] = (await Promise.all([once(archive, 'exit'), once(untar, 'exit')])) as [[number], [number]];
    if (archived !== 0 || untarred !== 0) throw new Error(`git archive ${sha} | tar: exit ${archived}, ${untarred}`);

    if (await hasEveryPackage(root)) {
      await linkModules(root);
    } else {
      log(`against: ${rev} names packages this tree does not have; npm ci in ${root}`);
      await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    }
    if (opts.built) await buildTree(root);
    return { rev, sha, root, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** Whether this tree's node_modules holds every package the revision's package.json names. */
async function hasEveryPackage(root: string): Promise<boolean> {
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
  const names = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})];
  for (const name of names) {
    try {
      await access(path.join(rootDir, 'node_modules', name, 'package.json'));
    } catch {
      return false;
    }
  }
  return true;
}

/** Hard links of this tree's node_modules (a symbolic link where the two are on different file systems). */
async function linkModules(root: string): Promise<void> {
  const from = path.join(rootDir, 'node_modules');
  const to = path.join(root, 'node_modules');
  try {
    await run('cp', ['-al', from, to]);
  } catch {
    await rm(to, { recursive: true, force: true });
    await symlink(from, to, 'dir');
  }
}

/** One side of the comparison: a tree, its database, server and fixtures. */
export interface Side {
  label: string;
  root: string;
  setup: StoreSetup;
  server: Server;
  fixtures: Fixtures;
}

export async function startSide(opts: Options, store: StoreName, label: string, root: string): Promise<Side> {
  const port = await freePort();
  const setup = await setupStore({ ...opts, dataDir: undefined }, store, port);
  try {
    await seedStore({ ...opts, dataDir: undefined }, store, setup, root);
    const server = await startServer(opts, setup.env, undefined, root);
    try {
      log(`${store}/${label}: server up (pid ${server.child.pid}); creating fixtures`);
      return { label, root, setup, server, fixtures: await makeFixtures(server.base, setup.config) };
    } catch (err) {
      await server.stop();
      throw err;
    }
  } catch (err) {
    await setup.cleanup();
    throw err;
  }
}

export async function stopSide(side: Side): Promise<void> {
  await side.server.stop();
  await side.setup.cleanup();
}

/** The scenarios `--scenarios` chose, by name, as each side's fixtures make them. */
export function chosenScenarios(
  opts: Options,
  current: Side,
  against: Side,
): { names: string[]; mine: Map<string, Scenario>; theirs: Map<string, Scenario> } {
  const byName = (f: Fixtures): Map<string, Scenario> => new Map(scenarios(f).map((s) => [s.name, s]));
  const mine = byName(current.fixtures);
  const names = [...mine.keys()].filter((n) => !opts.scenarios || opts.scenarios.includes(n));
  if (names.length === 0) throw new Error(`no scenario matches --scenarios ${opts.scenarios?.join(',')}`);
  return { names, mine, theirs: byName(against.fixtures) };
}

/** The medians of a side's rounds of one scenario. */
interface SideFigures {
  rps: number;
  p99: number;
  cpuUsPerRequest: number;
  ceilingRps: number;
  ceilingCpuUsPerRequest: number;
  ratio: number;
  otherCores: number;
  failed: number;
  rounds: { cardshelf: Measured; ceiling: Measured }[];
}

export interface ComparedScenario {
  name: string;
  request: string;
  status: number;
  responseBytes: number;
  target: Scenario['target'];
  /** This tree's medians against the target (undefined: no target). */
  targetMet: boolean | undefined;
  current: SideFigures;
  /** Undefined when the revision does not serve the scenario as this tree does. */
  against: SideFigures | undefined;
  againstNote?: string;
}

export interface ComparedStore {
  store: StoreName;
  rev: string;
  sha: string;
  rssMB: { current: number; against: number };
  scenarios: ComparedScenario[];
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

function figures(rounds: SideFigures['rounds']): SideFigures {
  const of = (pick: (r: SideFigures['rounds'][number]) => number): number => median(rounds.map(pick));
  return {
    rps: Math.round(of((r) => r.cardshelf.rps)),
    p99: of((r) => r.cardshelf.p99),
    cpuUsPerRequest: Math.round(of((r) => r.cardshelf.cpuUsPerRequest)),
    ceilingRps: Math.round(of((r) => r.ceiling.rps)),
    ceilingCpuUsPerRequest: Math.round(of((r) => r.ceiling.cpuUsPerRequest)),
    ratio: Math.round(of((r) => (r.ceiling.rps > 0 ? r.cardshelf.rps / r.ceiling.rps : 0)) * 1000) / 1000,
    otherCores: Math.round(of((r) => r.cardshelf.otherCores) * 100) / 100,
    failed: rounds.reduce((n, r) => n + r.cardshelf.non2xx + r.cardshelf.errors + r.cardshelf.timeouts, 0),
    rounds,
  };
}

/** Both sides on one store, every chosen scenario in alternating rounds. */
export async function benchStoreAgainst(opts: Options, store: StoreName, ceiling: Ceiling, checkout: Checkout): Promise<ComparedStore> {
  const current = await startSide(opts, store, 'this tree', rootDir);
  let against: Side | undefined;
  try {
    against = await startSide(opts, store, checkout.rev, checkout.root);
    const { names, mine, theirs } = chosenScenarios(opts, current, against);

    const results: ComparedScenario[] = [];
    for (const name of names) {
      const s = mine.get(name) as Scenario;
      log(`${store}: ${name} (${opts.rounds} rounds) ...`);
      const p = await prepareScenario(opts, current.server, current.fixtures, s);
      let q: Prepared | undefined;
      let againstNote: string | undefined;
      try {
        q = await prepareScenario(opts, against.server, against.fixtures, theirs.get(name) as Scenario);
      } catch (err) {
        againstNote = `not served by ${checkout.rev} as by this tree: ${(err as Error).message.slice(0, 100)}`;
        log(`${store}: ${name}: ${againstNote}`);
      }
      const sides: { side: Side; prepared: Prepared; rounds: SideFigures['rounds'] }[] = [{ side: current, prepared: p, rounds: [] }];
      if (q) sides.push({ side: against, prepared: q, rounds: [] });
      for (let round = 0; round < opts.rounds; round++) {
        for (const entry of round % 2 === 0 ? sides : [...sides].reverse()) {
          const ceil = await measureCeiling(opts, ceiling, entry.side.server, entry.prepared);
          const { mine: measured } = await measureServer(opts, entry.side.server, ceiling, entry.prepared, ceil.rps);
          entry.rounds.push({ cardshelf: measured, ceiling: ceil });
          log(
            `${store}: ${name} round ${round + 1} ${entry.side.label}: ${measured.rps.toLocaleString('en')} req/s ` +
              `(${measured.cpuUsPerRequest} µs CPU/req, p99 ${measured.p99} ms), ceiling ${ceil.rps.toLocaleString('en')} req/s, ` +
              `other load ${measured.otherCores} cores`,
          );
        }
      }
      const cur = figures(sides[0]?.rounds ?? []);
      const hasTarget = Object.keys(s.target).length > 0;
      const result: ComparedScenario = {
        name,
        request: `${s.method} ${s.route ?? s.path}`,
        status: p.captured.status,
        responseBytes: p.captured.body.length,
        target: s.target,
        targetMet: hasTarget ? targetMet(s, { ...cur.rounds[0]!.cardshelf, rps: cur.rps, p99: cur.p99 }, cur.ratio) : undefined,
        current: cur,
        against: sides[1] ? figures(sides[1].rounds) : undefined,
        ...(againstNote ? { againstNote } : {}),
      };
      results.push(result);
      log(`${store}: ${formatCompared(result, checkout.rev)}`);
    }
    const rss = async (side: Side): Promise<number> => (await memoryOf(side.server.child.pid as number)).peakMB;
    return {
      store,
      rev: checkout.rev,
      sha: checkout.sha,
      rssMB: { current: await rss(current), against: await rss(against) },
      scenarios: results,
    };
  } finally {
    if (against) await stopSide(against);
    await stopSide(current);
  }
}

const pct = (r: number): string => `${(r * 100).toFixed(1)}%`;

export function formatCompared(r: ComparedScenario, rev: string): string {
  const c = r.current;
  const a = r.against;
  const side = (f: SideFigures): string =>
    `${f.rps.toLocaleString('en')} req/s, p99 ${f.p99} ms, ${f.cpuUsPerRequest} µs CPU/req, ${pct(f.ratio)} of ceiling`;
  return (
    `${r.name}: this tree ${side(c)}` +
    (a ? `; ${rev} ${side(a)}; this/${rev}: ${(c.rps / Math.max(1, a.rps)).toFixed(2)}x req/s, ${(c.ratio / Math.max(0.001, a.ratio)).toFixed(2)}x ratio` : `; ${rev}: n/a`)
  );
}

/** The comparison as a markdown section of RESULTS.md. */
function markdownSection(opts: Options, command: string, startedAt: Date, m: Machine, s: ComparedStore): string {
  const lines = [
    `### ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC · ${s.store} · this tree against ${s.rev} (${s.sha.slice(0, 7)})${opts.label ? ` · ${opts.label}` : ''}`,
    '',
    `\`${command}\` · ${m.cpu}, ${m.cores} cores, Node ${m.node} · load average at start ${m.loadAverage.join(' ')} · ` +
      `${opts.connections} connections, ${opts.duration} s (+${opts.warmup} s warm-up) a measurement, ${opts.rounds} rounds alternating · ` +
      `medians of the rounds · server peak RSS: this tree ${s.rssMB.current} MB, ${s.rev} ${s.rssMB.against} MB`,
    '',
    `| scenario | request | ratio to ceiling, this tree | ratio, ${s.rev} | req/s this tree | req/s ${s.rev} | this / ${s.rev} (req/s) | p99 ms this / ${s.rev} | CPU µs/req this / ${s.rev} | other load (cores) | target | met |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of s.scenarios) {
    const c = r.current;
    const a = r.against;
    const failed = c.failed + (a?.failed ?? 0);
    lines.push(
      `| ${r.name} | \`${r.request}\` → ${r.status} | ${pct(c.ratio)} | ${a ? pct(a.ratio) : 'n/a'} | ${c.rps.toLocaleString('en')} | ${a ? a.rps.toLocaleString('en') : 'n/a'} | ` +
        `${a ? `${(c.rps / Math.max(1, a.rps)).toFixed(2)}x` : 'n/a'} | ${c.p99} / ${a ? a.p99 : 'n/a'} | ${c.cpuUsPerRequest} / ${a ? a.cpuUsPerRequest : 'n/a'} | ` +
        `${c.otherCores} | ${targetText(r.target)} | ${r.targetMet === undefined ? '' : r.targetMet ? 'yes' : 'no'}${failed > 0 ? ` (${failed} failed)` : ''} |`,
    );
  }
  const notes = s.scenarios.filter((r) => r.againstNote).map((r) => `- ${r.name}: ${r.againstNote}`);
  return [...lines, '', ...notes, ...(notes.length > 0 ? [''] : [])].join('\n');
}

export async function recordCompared(opts: Options, command: string, startedAt: Date, m: Machine, stores: ComparedStore[]): Promise<void> {
  for (const s of stores) {
    const file = await writeResultsJson(startedAt, `${s.store}-against-${s.sha.slice(0, 7)}`, {
      startedAt: startedAt.toISOString(),
      command,
      label: opts.label,
      machine: m,
      options: { ...opts, stores: undefined, store: s.store },
      ...s,
    });
    log(`wrote ${path.relative(rootDir, file)}`);
  }
  await addRunSections(stores.map((s) => markdownSection(opts, command, startedAt, m, s)));
}

export function printCompared(stores: ComparedStore[]): void {
  for (const s of stores) {
    process.stdout.write(`\n${s.store}, this tree against ${s.rev} (${s.sha.slice(0, 12)}), medians of the rounds:\n`);
    for (const r of s.scenarios) process.stdout.write(`  ${formatCompared(r, s.rev)}\n`);
  }
}
