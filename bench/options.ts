/**
 * The options of `npm run bench`: flags, or environment variables, read and checked once.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `usage: npm run bench -- [options]

  --duration S       seconds measured per scenario and target   (BENCH_DURATION, default 10)
  --warmup S         seconds of load before each measurement    (BENCH_WARMUP, default 3)
  --connections N    concurrent connections                     (BENCH_CONNECTIONS, default 32)
  --pipelining N     requests in flight per connection          (BENCH_PIPELINING, default 1)
  --scale N          users seeded (about 50 cards each)         (BENCH_SCALE, default 20: ~1,000 cards)
  --workers N        cardshelf serve --workers N                (BENCH_WORKERS, default 1)
  --store S          sqlite, postgres or all (postgres needs DATABASE_URL; default: all that apply)
  --scenarios A,B    only these scenarios (names as printed)
  --data-dir DIR     use (and keep) this SQLite data directory; seeds it only when it has no database
  --log-level L      the server's LOG_LEVEL                     (BENCH_LOG_LEVEL, default warn)
  --built            run bin/cardshelf.js (dist/) instead of the TypeScript sources
  --cpu-prof         profile the server (node --cpu-prof) and print where the time went
  --against REV      also run the given git revision (built beside this tree), alternating with
                     this tree in every scenario, and print the ratios of the two
  --rounds N         with --against: rounds of each scenario, the order alternating (default 3)
  --paired           with --against: load both trees at the same moments and compare the CPU
                     each spends a request (no ceiling, nothing recorded; see bench/paired.ts)
  --label TEXT       a note for the results table
  --no-record        do not write bench/results or bench/RESULTS.md
  --smoke            a short functional run (BENCH_SMOKE=1): ~1 s a scenario, scale 2, nothing recorded
`;

export type StoreName = 'sqlite' | 'postgres';

export interface Options {
  duration: number;
  warmup: number;
  connections: number;
  pipelining: number;
  scale: number;
  workers: number;
  stores: StoreName[];
  scenarios: string[] | undefined;
  dataDir: string | undefined;
  logLevel: string;
  built: boolean;
  cpuProf: boolean;
  label: string;
  against: string | undefined;
  rounds: number;
  paired: boolean;
  record: boolean;
  smoke: boolean;
}

export function readOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      pipelining: { type: 'string' },
      scale: { type: 'string' },
      workers: { type: 'string' },
      store: { type: 'string' },
      scenarios: { type: 'string' },
      'data-dir': { type: 'string' },
      'log-level': { type: 'string' },
      built: { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      label: { type: 'string', default: '' },
      against: { type: 'string' },
      rounds: { type: 'string' },
      paired: { type: 'boolean', default: false },
      'no-record': { type: 'boolean', default: false },
      smoke: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const env = process.env;
  const smoke = values.smoke || env.BENCH_SMOKE === '1';
  const num = (flag: string | undefined, envValue: string | undefined, fallback: number, name: string): number => {
    const text = flag ?? envValue;
    if (text === undefined || text === '') return fallback;
    const n = Number(text);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not '${text}'`);
    return n;
  };
  if (values.paired && !values.against) throw new Error('--paired compares with --against REV');
  const storeFlag = values.store ?? 'all';
  if (!['sqlite', 'postgres', 'all'].includes(storeFlag)) throw new Error(`--store is sqlite, postgres or all`);
  if (storeFlag === 'postgres' && !env.DATABASE_URL) throw new Error('--store postgres needs DATABASE_URL');
  const stores: Options['stores'] =
    storeFlag === 'all' ? (env.DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite']) : [storeFlag as StoreName];
  return {
    duration: num(values.duration, env.BENCH_DURATION, smoke ? 1 : 10, 'duration'),
    warmup: smoke ? 0 : num(values.warmup, env.BENCH_WARMUP, 3, 'warmup'),
    connections: Math.round(num(values.connections, env.BENCH_CONNECTIONS, 32, 'connections')),
    pipelining: Math.round(num(values.pipelining, env.BENCH_PIPELINING, 1, 'pipelining')),
    scale: Math.round(num(values.scale, env.BENCH_SCALE, smoke ? 2 : 20, 'scale')),
    workers: Math.round(num(values.workers, env.BENCH_WORKERS, 1, 'workers')),
    stores,
    scenarios: values.scenarios?.split(',').map((s) => s.trim()).filter(Boolean),
    dataDir: values['data-dir'] ? path.resolve(values['data-dir']) : undefined,
    logLevel: values['log-level'] ?? env.BENCH_LOG_LEVEL ?? 'warn',
    built: values.built,
    cpuProf: values['cpu-prof'],
    label: values.label,
    against: values.against,
    rounds: Math.round(num(values.rounds, undefined, smoke ? 1 : 3, 'rounds')),
    paired: values.paired,
    record: !smoke && !values['no-record'],
    smoke,
  };
}
