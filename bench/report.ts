/**
 * The results of a run: their shape, the lines printed, bench/results/<time>-<store>.json and
 * the run's section in bench/RESULTS.md.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Measured } from './load.js';
import type { LockWaits } from './lock-waits.js';
import { log } from './log.js';
import type { Options, StoreName } from './options.js';
import { benchDir, rootDir } from './paths.js';
import type { Summary } from './profile-summary.js';
import type { Scenario } from './scenarios.js';
import type { DatasetCounts } from './store.js';

const RESULTS_DIR = path.join(benchDir, 'results');
export const RESULTS_MD = path.join(benchDir, 'RESULTS.md');

/** Writes bench/results/<startedAt>-<name>.json (`name`: the store, or media): the file's path. */
export async function writeResultsJson(startedAt: Date, name: string, body: unknown): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${startedAt.toISOString().replace(/[:.]/g, '-')}-${name}.json`);
  await writeFile(file, `${JSON.stringify(body, null, 2)}\n`);
  return file;
}

export interface ScenarioResult {
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
  /** A write on PostgreSQL: how often a lock request was waiting (bench/lock-waits.ts). */
  lockWaits?: LockWaits;
}

export interface StoreResult {
  store: StoreName;
  seed: { users: number; seconds: number | null };
  dataset: DatasetCounts;
  dbMB: number;
  rss: { idleMB: number; afterMB: number; peakMB: number };
  scenarios: ScenarioResult[];
}

const fmt = (n: number): string => n.toLocaleString('en');
const ms = (n: number): string => (n < 10 ? n.toFixed(2) : n.toFixed(1));

export function targetText(t: Scenario['target']): string {
  const parts: string[] = [];
  if (t.ratio !== undefined) parts.push(`>= ${t.ratio * 100}% of ceiling`);
  if (t.p99Ms !== undefined) parts.push(`p99 < ${t.p99Ms} ms`);
  if (t.rps !== undefined) parts.push(`>= ${fmt(t.rps)} req/s`);
  return parts.join(', ');
}

export function formatRow(r: ScenarioResult): string {
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

export interface Machine {
  cpu: string;
  cores: number;
  node: string;
  os: string;
  memoryGB: number;
  loadAverage: number[];
}

/** The results of every store, as printed on stdout at the end of a run. */
export function printResults(results: StoreResult[]): void {
  for (const s of results) {
    process.stdout.write(
      `\n${s.store}: ${fmt(s.dataset.cards)} cards, database ${fmt(s.dbMB)} MB, server RSS ${s.rss.afterMB} MB (peak ${s.rss.peakMB} MB)\n`,
    );
    for (const r of s.scenarios) process.stdout.write(`  ${formatRow(r)}\n`);
  }
}

export function machine(): Machine {
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

// These markers stand in bench/RESULTS.md as they are: their text must not change.
const MARK_START = '<!-- bench:runs:start (bench/run.ts adds each recorded run here, newest first) -->';
const MARK_END = '<!-- bench:runs:end -->';

/** Writes a results file a store, and adds a section a store at the top of RESULTS.md's runs. */
export async function record(opts: Options, command: string, startedAt: Date, m: Machine, stores: StoreResult[]): Promise<void> {
  for (const s of stores) {
    const file = await writeResultsJson(startedAt, s.store, {
      startedAt: startedAt.toISOString(),
      command,
      label: opts.label,
      machine: m,
      options: { ...opts, stores: undefined, store: s.store },
      ...s,
    });
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
  await addRunSections(sections);
}

/** Adds sections (markdown) at the top of RESULTS.md's runs. */
export async function addRunSections(sections: string[]): Promise<void> {
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
