/**
 * `npm run bench -- --against <rev> --paired`: both trees under load at the same moments, each
 * from its own load generator, and the CPU each spends a request compared round by round.
 *
 * The alternating comparison measures the two trees seconds apart; on this shared machine the
 * speed of a core moves by as much as half between two such measurements, more than most
 * changes weigh. Under load together, both servers meet the same machine at every moment, so
 * the ratio of their CPU a request holds where each figure alone does not. There is no ceiling
 * here and nothing is recorded: it answers one question, which tree costs less a request.
 */
import { chosenScenarios, startSide, stopSide, median, type Checkout, type Side } from './against.js';
import { measure, type Measured } from './load.js';
import { log } from './log.js';
import type { Options, StoreName } from './options.js';
import { processTree } from './process-sampler.js';
import { prepareScenario } from './run-scenario.js';
import type { Scenario } from './scenarios.js';
import { rootDir } from './paths.js';

export interface PairedScenario {
  name: string;
  /** Per round: this tree's CPU a request over the revision's, and the same of req/s. */
  cpuRatios: number[];
  rpsRatios: number[];
  current: Measured[];
  against: Measured[];
}

/** Every chosen scenario on one store, `opts.rounds` paired measurements each. */
export async function benchStorePaired(opts: Options, store: StoreName, checkout: Checkout): Promise<PairedScenario[]> {
  const current = await startSide(opts, store, 'this tree', rootDir);
  let against: Side | undefined;
  try {
    against = await startSide(opts, store, checkout.rev, checkout.root);
    const { names, mine, theirs } = chosenScenarios(opts, current, against);
    const results: PairedScenario[] = [];
    for (const name of names) {
      const sides = [
        { side: current, prepared: await prepareScenario(opts, current.server, current.fixtures, mine.get(name) as Scenario) },
        { side: against, prepared: await prepareScenario(opts, against.server, against.fixtures, theirs.get(name) as Scenario) },
      ];
      const result: PairedScenario = { name, cpuRatios: [], rpsRatios: [], current: [], against: [] };
      for (let round = 0; round < opts.rounds; round++) {
        const runs = await Promise.all(
          sides.map(async ({ side, prepared }) => {
            const pids = await processTree(side.server.child.pid as number);
            // A bound on the creates of a round (wishlist-post, library-add-new), as the ceiling gives it elsewhere.
            await prepared.mintFor(3000);
            return { side, prepared, watch: { target: pids, others: [] } };
          }),
        );
        const load = (seconds: number): Promise<Measured[]> =>
          Promise.all(runs.map((r) => measure(opts, r.side.server.port, r.prepared.s, seconds, r.watch, r.prepared.requestFor)));
        if (opts.warmup > 0) await load(opts.warmup);
        const [a, b] = (await load(opts.duration)) as [Measured, Measured];
        result.current.push(a);
        result.against.push(b);
        result.cpuRatios.push(a.cpuUsPerRequest / Math.max(1, b.cpuUsPerRequest));
        result.rpsRatios.push(a.rps / Math.max(1, b.rps));
        log(
          `${store}: ${name} round ${round + 1}: this tree ${a.rps.toLocaleString('en')} req/s, ${a.cpuUsPerRequest} µs CPU/req; ` +
            `${checkout.rev} ${b.rps.toLocaleString('en')} req/s, ${b.cpuUsPerRequest} µs CPU/req`,
        );
      }
      results.push(result);
    }
    return results;
  } finally {
    if (against) await stopSide(against);
    await stopSide(current);
  }
}

export function printPaired(store: StoreName, rev: string, results: PairedScenario[]): void {
  process.stdout.write(`\n${store}, this tree and ${rev} under load together, medians of the rounds:\n`);
  for (const r of results) {
    const cpu = (m: Measured[]): number => median(m.map((x) => x.cpuUsPerRequest));
    process.stdout.write(
      `  ${r.name}: CPU a request ${cpu(r.current)} / ${cpu(r.against)} µs, this/${rev} ${median(r.cpuRatios).toFixed(3)}x ` +
        `(rounds ${r.cpuRatios.map((x) => x.toFixed(2)).join(', ')}); req/s this/${rev} ${median(r.rpsRatios).toFixed(3)}x\n`,
    );
  }
}
