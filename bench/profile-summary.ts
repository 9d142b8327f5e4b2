/**
 * Summarises V8 CPU profiles (`node --cpu-prof`): where the time went, by function (self and
 * total time) and by package. `npx tsx bench/profile-summary.ts <file.cpuprofile>... [--top 25]`
 * Several files (one per worker) are added together.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface Row {
  name: string;
  ms: number;
  share: number;
}
export interface Summary {
  totalMs: number;
  idleMs: number;
  selfByFunction: Row[];
  totalByFunction: Row[];
  selfByPackage: Row[];
}

const cwd = process.cwd();

/** Where a frame's code comes from: an npm package, our sources, node itself, or V8/native. */
function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const file = url.replace(/^file:\/\//, '');
  const rel = path.relative(cwd, file);
  return rel.startsWith('..') ? file : rel;
}

function frameKey(f: CallFrame): string {
  const where = packageOf(f.url, f.functionName);
  const file = f.url ? `${path.basename(f.url.replace(/^file:\/\//, ''))}:${f.lineNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'} ${where === file ? '' : `[${where}] `}${file}`.trim();
}

export function summarise(profiles: Profile[], top: number): Summary {
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  const add = (m: Map<string, number>, k: string, v: number): void => {
    m.set(k, (m.get(k) ?? 0) + v);
  };

  for (const p of profiles) {
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    for (let i = 0; i < p.samples.length; i++) {
      // A sample's time is the gap to the next sample (the last one gets the profile's end).
      const ms = ((p.timeDeltas[i + 1] ?? 0) || 0) / 1000;
      const node = byId.get(p.samples[i] as number);
      if (!node) continue;
      totalMs += ms;
      const name = node.callFrame.functionName;
      if (name === '(idle)' || name === '(program)') {
        if (name === '(idle)') idleMs += ms;
        add(self, name, ms);
        continue;
      }
      add(self, frameKey(node.callFrame), ms);
      add(byPackage, packageOf(node.callFrame.url, name), ms);
      const seen = new Set<string>();
      for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
        const n = byId.get(id);
        if (!n || n.callFrame.functionName === '(root)') continue;
        const key = frameKey(n.callFrame);
        if (seen.has(key)) continue;
        seen.add(key);
        add(total, key, ms);
      }
    }
  }
  const busy = totalMs - idleMs;
  const rows = (m: Map<string, number>): Row[] =>
    [...m.entries()]
      .filter(([k]) => k !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms: Math.round(ms), share: busy > 0 ? ms / busy : 0 }));
  return {
    totalMs: Math.round(totalMs),
    idleMs: Math.round(idleMs),
    selfByFunction: rows(self),
    totalByFunction: rows(total),
    selfByPackage: rows(byPackage),
  };
}

export function formatSummary(s: Summary): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1).padStart(5)}%`;
  const table = (title: string, rows: Row[]): string =>
    [`${title}`, ...rows.map((r) => `  ${pct(r.share)} ${String(r.ms).padStart(7)} ms  ${r.name}`)].join('\n');
  return [
    `profiled ${s.totalMs} ms, idle ${s.idleMs} ms; shares are of the busy time`,
    table('self time by package', s.selfByPackage),
    table('self time by function', s.selfByFunction),
    table('total time (with callees) by function', s.totalByFunction),
  ].join('\n\n');
}

export async function summariseFiles(files: string[], top = 25): Promise<Summary> {
  const profiles = await Promise.all(files.map(async (f) => JSON.parse(await readFile(f, 'utf8')) as Profile));
  return summarise(profiles, top);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' } },
  });
  if (positionals.length === 0) {
    process.stderr.write('usage: tsx bench/profile-summary.ts <file.cpuprofile>... [--top N]\n');
    process.exitCode = 2;
  } else {
    process.stdout.write(`${formatSummary(await summariseFiles(positionals, Number(values.top)))}\n`);
  }
}
