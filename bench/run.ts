/**
 * `npm run bench`: Cardshelf under load, against the fastest Node.js can answer the same
 * exchange. For each store (SQLite always, PostgreSQL when DATABASE_URL is set) it seeds a
 * database (`cardshelf seed --scale N`), starts the real server as a child process, creates its
 * fixtures through the API, and then for every scenario:
 *   1. captures the real response (status, headers, body);
 *   2. measures the ceiling: a bare node:http child serving those bytes from memory, under the
 *      same load (connections, duration, pipelining, the same requests);
 *   3. measures Cardshelf.
 * It prints requests/s, p50 and p99 latency and the ratio to the ceiling, writes
 * bench/results/<time>-<store>.json and adds the run to the table in bench/RESULTS.md.
 *
 * The machine is shared and noisy: compare ratios from one run, not absolute figures across runs.
 * `--smoke` (or BENCH_SMOKE=1) is a functional check of the harness (about a second a scenario,
 * nothing recorded): it fails only when a request fails, never on a timing.
 *
 * `--against REV` compares this tree with a git revision in one run (bench/against.ts).
 *
 * Options (flag, or environment variable): see USAGE in bench/options.ts, or `npm run bench -- --help`.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCeiling, type Ceiling } from './ceiling.js';
import { makeFixtures } from './fixtures.js';
import { log } from './log.js';
import { readOptions, type Options, type StoreName } from './options.js';
import { rootDir } from './paths.js';
import { memoryOf } from './process-sampler.js';
import { formatSummary } from './profile-summary.js';
import { formatRow, machine, printResults, record, type Machine, type ScenarioResult, type StoreResult } from './report.js';
import { benchStorePaired, printPaired } from './paired.js';
import { benchStoreAgainst, checkoutRevision, printCompared, recordCompared, type ComparedStore } from './against.js';
import { runScenario } from './run-scenario.js';
import { scenarios } from './scenarios.js';
import { buildTree, freePort, startServer, type Server } from './server.js';
import { countDataset, seedStore, setupStore } from './store.js';

/** Seeds and serves one store, runs the chosen scenarios on it, and tears it down. */
async function benchStore(opts: Options, store: StoreName, ceiling: Ceiling): Promise<StoreResult> {
  const port = await freePort();
  const setup = await setupStore(opts, store, port);
  let server: Server | undefined;
  try {
    const seedSeconds = await seedStore(opts, store, setup);

    const profileDir = opts.cpuProf ? await mkdtemp(path.join(os.tmpdir(), 'cardshelf-prof-')) : undefined;
    server = await startServer(opts, setup.env, profileDir);
    const idle = await memoryOf(server.child.pid as number);
    log(`${store}: server up (pid ${server.child.pid}, ${idle.rssMB} MB); creating fixtures`);
    const fixtures = await makeFixtures(server.base, setup.config);
    const dataset = await countDataset(setup.config);
    log(`${store}: ${dataset.cards.toLocaleString('en')} cards, ${dataset.users.toLocaleString('en')} users in the database`);

    const wanted = scenarios(fixtures).filter((s) => !opts.scenarios || opts.scenarios.includes(s.name));
    if (wanted.length === 0) throw new Error(`no scenario matches --scenarios ${opts.scenarios?.join(',')}`);
    const results: ScenarioResult[] = [];
    for (const s of wanted) {
      log(`${store}: ${s.name} ...`);
      const r = await runScenario(opts, server, ceiling, fixtures, s);
      results.push(r);
      log(`${store}: ${formatRow(r)}`);
    }
    const after = await memoryOf(server.child.pid as number);
    await server.stop();
    server = undefined;

    if (opts.cpuProf) {
      for (const r of results) {
        if (r.profile) process.stdout.write(`\nCPU profile of the server during ${store}/${r.name}:\n${formatSummary(r.profile)}\n`);
      }
    }
    return {
      store,
      seed: { users: opts.scale, seconds: seedSeconds },
      dataset,
      dbMB: Math.round((await setup.size()) / 1048576),
      rss: { idleMB: idle.rssMB, afterMB: after.rssMB, peakMB: after.peakMB },
      scenarios: results,
    };
  } finally {
    await server?.stop();
    await setup.cleanup();
  }
}

async function main(): Promise<number> {
  const opts = readOptions(process.argv.slice(2));
  const shellWord = (a: string): string => (/^[\w./:=,@%+-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`);
  const args = process.argv.slice(2).map(shellWord).join(' ');
  const command = `npm run bench${args ? ` -- ${args}` : ''}`;
  const startedAt = new Date();
  const m = machine();
  log(
    `bench: ${m.cpu}, ${m.cores} cores, Node ${m.node}, load ${m.loadAverage.join(' ')}; ` +
      `${opts.connections} connections, pipelining ${opts.pipelining}, ${opts.duration} s + ${opts.warmup} s warm-up; stores: ${opts.stores.join(', ')}`,
  );
  // --built measures dist/: built now from this tree, so that it is never an older build's
  // figure (the revision of --against is built in its own directory, against.ts).
  if (opts.built) {
    log('bench: building this tree (tsc -p tsconfig.build.json)');
    await buildTree(rootDir);
  }
  if (opts.against) return compareAgainst(opts, opts.against, command, startedAt, m);
  const ceiling = await startCeiling();
  const results: StoreResult[] = [];
  try {
    for (const store of opts.stores) results.push(await benchStore(opts, store, ceiling));
  } finally {
    await ceiling.stop();
  }

  printResults(results);
  if (opts.record) await record(opts, command, startedAt, m, results);

  // The one thing a run can fail on: requests that did not succeed (never a timing).
  const failed = results.flatMap((s) =>
    s.scenarios.filter((r) => r.cardshelf.non2xx + r.cardshelf.errors + r.cardshelf.timeouts > 0).map((r) => `${s.store}/${r.name}`),
  );
  if (failed.length > 0) {
    log(`bench: requests failed in ${failed.join(', ')}`);
    return 1;
  }
  if (opts.smoke) log('bench smoke: every scenario answered, on every store');
  return 0;
}

/** `--against REV`: this tree and REV alternately, scenario by scenario (bench/against.ts). */
async function compareAgainst(opts: Options, rev: string, command: string, startedAt: Date, m: Machine): Promise<number> {
  if (opts.dataDir) throw new Error('--against seeds a database for each side: it does not take --data-dir');
  const checkout = await checkoutRevision(opts, rev);
  if (opts.paired) {
    try {
      for (const store of opts.stores) printPaired(store, rev, await benchStorePaired(opts, store, checkout));
    } finally {
      await checkout.cleanup();
    }
    return 0;
  }
  const results: ComparedStore[] = [];
  try {
    const ceiling = await startCeiling();
    try {
      for (const store of opts.stores) results.push(await benchStoreAgainst(opts, store, ceiling, checkout));
    } finally {
      await ceiling.stop();
    }
  } finally {
    await checkout.cleanup();
  }
  printCompared(results);
  if (opts.record) await recordCompared(opts, command, startedAt, m, results);
  const failed = results.flatMap((s) =>
    s.scenarios.filter((r) => r.current.failed + (r.against?.failed ?? 0) > 0).map((r) => `${s.store}/${r.name}`),
  );
  if (failed.length > 0) {
    log(`bench: requests failed in ${failed.join(', ')}`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    log(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  },
);
