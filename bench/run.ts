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
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { exchange, startCeiling, type Ceiling } from './ceiling.js';
import { makeFixtures, mintFreshUsers, type Fixtures } from './fixtures.js';
import { measure, type Measured, type Watched } from './load.js';
import { log } from './log.js';
import { readOptions, type Options, type StoreName } from './options.js';
import { benchDir, rootDir } from './paths.js';
import { memoryOf, processTree } from './process-sampler.js';
import { formatSummary, type Summary } from './profile-summary.js';
import { requestHeaders, scenarios, WISHLISTS_PER_USER, type Scenario } from './scenarios.js';
import { freePort, startProfiles, startServer, type Server } from './server.js';
import { countDataset, seedStore, setupStore, type DatasetCounts } from './store.js';

const RESULTS_DIR = path.join(benchDir, 'results');
const RESULTS_MD = path.join(benchDir, 'RESULTS.md');

// ---------------------------------------------------------------------------------------------
// Measuring

interface ScenarioResult {
  name: string;
  kind: Scenario['kind'];
  request: string;
  status: number;
  responseBytes: number;
  note?: string;
  ceiling: Measured;
  cardshelf: Measured;
  /** Cardshelf's requests/s over the ceiling's. */
  ratio: number;
  target: Scenario['target'];
  targetMet: boolean;
  rssMB: number;
  /** With --cpu-prof: the server's profile over the measured load. */
  profile?: Summary;
}

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

interface StoreResult {
  store: StoreName;
  seed: { users: number; seconds: number | null };
  dataset: DatasetCounts;
  dbMB: number;
  rss: { idleMB: number; afterMB: number; peakMB: number };
  scenarios: ScenarioResult[];
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
// Reporting

const fmt = (n: number): string => n.toLocaleString('en');
const ms = (n: number): string => (n < 10 ? n.toFixed(2) : n.toFixed(1));

function targetText(t: Scenario['target']): string {
  const parts: string[] = [];
  if (t.ratio !== undefined) parts.push(`>= ${t.ratio * 100}% of ceiling`);
  if (t.p99Ms !== undefined) parts.push(`p99 < ${t.p99Ms} ms`);
  if (t.rps !== undefined) parts.push(`>= ${fmt(t.rps)} req/s`);
  return parts.join(', ');
}

function formatRow(r: ScenarioResult): string {
  const errs = r.cardshelf.non2xx + r.cardshelf.errors + r.cardshelf.timeouts;
  return (
    `${r.name}: ${fmt(r.cardshelf.rps)} req/s, p50 ${ms(r.cardshelf.p50)} ms, p99 ${ms(r.cardshelf.p99)} ms, ` +
    `${fmt(r.cardshelf.cpuUsPerRequest)} µs CPU/req; ceiling ${fmt(r.ceiling.rps)} req/s (p50 ${ms(r.ceiling.p50)} ms, ` +
    `${fmt(r.ceiling.cpuUsPerRequest)} µs/req); ratio ${(r.ratio * 100).toFixed(1)}%; ` +
    `other load ${r.cardshelf.otherCores}/${r.ceiling.otherCores} cores` +
    (errs > 0 ? `; ${errs} FAILED requests` : '')
  );
}

function markdownTable(results: ScenarioResult[]): string {
  const lines = [
    '| scenario | request | bytes | req/s | p50 ms | p99 ms | CPU µs/req | ceiling req/s | ceiling p50 ms | ceiling µs/req | ratio | other load (cores) | target | met |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of results) {
    const errs = r.cardshelf.non2xx + r.cardshelf.errors + r.cardshelf.timeouts;
    lines.push(
      `| ${r.name} | \`${r.request}\` → ${r.status} | ${fmt(r.responseBytes)} | ${fmt(r.cardshelf.rps)} | ${ms(r.cardshelf.p50)} | ${ms(r.cardshelf.p99)} | ` +
        `${fmt(r.cardshelf.cpuUsPerRequest)} | ${fmt(r.ceiling.rps)} | ${ms(r.ceiling.p50)} | ${fmt(r.ceiling.cpuUsPerRequest)} | ${(r.ratio * 100).toFixed(1)}% | ` +
        `${r.cardshelf.otherCores} / ${r.ceiling.otherCores} | ${targetText(r.target)} | ${r.targetMet ? 'yes' : 'no'}${errs > 0 ? ` (${errs} failed)` : ''} |`,
    );
  }
  return lines.join('\n');
}

interface Machine {
  cpu: string;
  cores: number;
  node: string;
  os: string;
  memoryGB: number;
  loadAverage: number[];
}

function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    memoryGB: Math.round(os.totalmem() / 1073741824),
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

const MARK_START = '<!-- bench:runs:start (bench/run.ts adds each recorded run here, newest first) -->';
const MARK_END = '<!-- bench:runs:end -->';

async function record(opts: Options, command: string, startedAt: Date, m: Machine, stores: StoreResult[]): Promise<void> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  for (const s of stores) {
    const file = path.join(RESULTS_DIR, `${stamp}-${s.store}.json`);
    const body = {
      startedAt: startedAt.toISOString(),
      command,
      label: opts.label,
      machine: m,
      options: { ...opts, stores: undefined, store: s.store },
      ...s,
    };
    await writeFile(file, `${JSON.stringify(body, null, 2)}\n`);
    log(`wrote ${path.relative(rootDir, file)}`);
  }

  const sections = stores.map((s) =>
    [
      `### ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC · ${s.store} · ${fmt(s.dataset.cards)} cards${opts.label ? ` · ${opts.label}` : ''}`,
      '',
      `\`${command}\` · ${m.cpu}, ${m.cores} cores, Node ${m.node} · load average at start ${m.loadAverage.join(' ')} · ` +
        `${opts.connections} connections, pipelining ${opts.pipelining}, ${opts.duration} s (+${opts.warmup} s warm-up) a run · ` +
        `workers ${opts.workers} · LOG_LEVEL ${opts.logLevel}`,
      '',
      `Data: ${fmt(s.dataset.users)} users, ${fmt(s.dataset.cards)} cards, ${fmt(s.dataset.libraryRecords)} library records, ` +
        `${fmt(s.dataset.groups)} groups, ${fmt(s.dataset.wishlists)} wishlists; database ${fmt(s.dbMB)} MB` +
        `${s.seed.seconds !== null ? `, seeded in ${s.seed.seconds} s` : ''}. ` +
        `Server RSS: ${s.rss.idleMB} MB idle, ${s.rss.afterMB} MB after the run, ${s.rss.peakMB} MB peak.`,
      '',
      markdownTable(s.scenarios),
      '',
    ].join('\n'),
  );
  let md: string;
  try {
    md = await readFile(RESULTS_MD, 'utf8');
  } catch {
    md = `# Benchmark results\n\n${MARK_START}\n${MARK_END}\n`;
  }
  if (!md.includes(MARK_START) || !md.includes(MARK_END)) md = `${md.trimEnd()}\n\n## Runs\n\n${MARK_START}\n${MARK_END}\n`;
  md = md.replace(MARK_START, `${MARK_START}\n\n${sections.join('\n')}`);
  await writeFile(RESULTS_MD, md);
  log(`updated ${path.relative(rootDir, RESULTS_MD)}`);
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

  for (const s of results) {
    process.stdout.write(
      `\n${s.store}: ${fmt(s.dataset.cards)} cards, database ${fmt(s.dbMB)} MB, server RSS ${s.rss.afterMB} MB (peak ${s.rss.peakMB} MB)\n`,
    );
    for (const r of s.scenarios) process.stdout.write(`  ${formatRow(r)}\n`);
  }
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
