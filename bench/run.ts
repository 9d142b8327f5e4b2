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
 * Options (flag, or environment variable): see USAGE in bench/options.ts, or `npm run bench -- --help`.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { exchange, startCeiling, type Ceiling } from './ceiling.js';
import { makeFixtures, mintFreshUsers, type Fixtures } from './fixtures.js';
import { measure, type Measured, type Watched } from './load.js';
import { log } from './log.js';
import { readOptions, type Options, type StoreName } from './options.js';
import { memoryOf, processTree } from './process-sampler.js';
import { formatSummary } from './profile-summary.js';
import { formatRow, machine, printResults, record, type ScenarioResult, type StoreResult } from './report.js';
import { requestHeaders, scenarios, WISHLISTS_PER_USER, type Scenario } from './scenarios.js';
import { freePort, startProfiles, startServer, type Server } from './server.js';
import { countDataset, seedStore, setupStore } from './store.js';

// ---------------------------------------------------------------------------------------------
// Measuring

function targetMet(s: Scenario, c: Measured, ratio: number): boolean {
  if (s.target.ratio !== undefined && ratio < s.target.ratio) return false;
  if (s.target.p99Ms !== undefined && c.p99 >= s.target.p99Ms) return false;
  if (s.target.rps !== undefined && c.rps < s.target.rps) return false;
  return true;
}

async function runScenario(
  opts: Options,
  server: Server,
  ceiling: Ceiling,
  f: Fixtures,
  s: Scenario,
): Promise<ScenarioResult> {
  let tokenFor: (() => string) | undefined;
  let creates = 0;
  if (s.name === 'wishlist-post') {
    // Users are minted ahead, as many as the creates may need (see below); the counter runs on
    // through warm-up and measurement, so no user ever reaches the limit.
    tokenFor = () => {
      const token = f.freshUsers[Math.floor(creates / WISHLISTS_PER_USER) % f.freshUsers.length] as string;
      creates++;
      return token;
    };
    await mintFreshUsers(f, 2000);
  }

  const firstToken = tokenFor ? tokenFor() : s.token;
  const captured = await exchange(server.base, s.method, s.path, requestHeaders(s, firstToken), s.body);
  if (captured.status < 200 || captured.status > 299) {
    throw new Error(`${s.name}: the server answered ${captured.status}: ${captured.body.toString('utf8').slice(0, 300)}`);
  }
  if (s.name === 'library-add-200' && captured.status !== 200) throw new Error(`${s.name}: expected 200, got ${captured.status}`);

  const serverPids = await processTree(server.child.pid as number);
  const ceilingWatch: Watched = { target: [ceiling.pid], others: [process.pid, ...serverPids] };
  const serverWatch: Watched = { target: serverPids, others: [process.pid, ceiling.pid] };
  await ceiling.serve(captured);
  // The ceiling serves the same requests: with per-request tokens too (that costs the load
  // generator the same), cycling over the users minted so far.
  const ceilingTokens = tokenFor ? cycling(f.freshUsers) : undefined;
  if (opts.warmup > 0) await measure(opts, ceiling.port, s, opts.warmup, ceilingWatch, ceilingTokens);
  const ceil = await measure(opts, ceiling.port, s, opts.duration, ceilingWatch, ceilingTokens);

  if (tokenFor) {
    // Cardshelf cannot create faster than the ceiling answers: its count, with a margin, bounds
    // the creates, and so the users needed.
    const bound = Math.ceil(((ceil.rps * (opts.warmup + opts.duration)) / WISHLISTS_PER_USER) * 1.5) + 50;
    await mintFreshUsers(f, bound + Math.ceil(creates / WISHLISTS_PER_USER));
  }
  if (opts.warmup > 0) await measure(opts, server.port, s, opts.warmup, serverWatch, tokenFor);
  const profiling = server.profileDir ? await startProfiles(serverPids, server.profileDir) : undefined;
  const mine = await measure(opts, server.port, s, opts.duration, serverWatch, tokenFor);
  const profile = profiling ? await profiling.stop() : undefined;
  if (tokenFor && creates > f.freshUsers.length * WISHLISTS_PER_USER) {
    mine.non2xx = Math.max(mine.non2xx, 1);
    log(`${s.name}: more creates than minted users could make; some were refused`);
  }
  const ratio = ceil.rps > 0 ? mine.rps / ceil.rps : 0;
  const { rssMB } = await memoryOf(server.child.pid as number);
  return {
    name: s.name,
    kind: s.kind,
    request: `${s.method} ${s.route ?? s.path}`,
    status: captured.status,
    responseBytes: captured.body.length,
    ...(s.note ? { note: s.note } : {}),
    ceiling: ceil,
    cardshelf: mine,
    ratio: Math.round(ratio * 1000) / 1000,
    target: s.target,
    targetMet: targetMet(s, mine, ratio),
    rssMB,
    ...(profile ? { profile } : {}),
  };
}

function cycling(tokens: string[]): () => string {
  let i = 0;
  return () => tokens[i++ % tokens.length] as string;
}

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

// ---------------------------------------------------------------------------------------------

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

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    log(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  },
);
