/**
 * One scenario, measured: the real response captured, the ceiling replaying it under the load,
 * then Cardshelf under the same load (profiled with --cpu-prof), and the two compared.
 */
import { exchange, type Ceiling } from './ceiling.js';
import { mintFreshUsers, type Fixtures } from './fixtures.js';
import { measure, type Measured, type Watched } from './load.js';
import { log } from './log.js';
import type { Options } from './options.js';
import { memoryOf, processTree } from './process-sampler.js';
import type { ScenarioResult } from './report.js';
import { requestHeaders, WISHLISTS_PER_USER, type Scenario } from './scenarios.js';
import { startProfiles, type Server } from './server.js';

function targetMet(s: Scenario, c: Measured, ratio: number): boolean {
  if (s.target.ratio !== undefined && ratio < s.target.ratio) return false;
  if (s.target.p99Ms !== undefined && c.p99 >= s.target.p99Ms) return false;
  if (s.target.rps !== undefined && c.rps < s.target.rps) return false;
  return true;
}

export async function runScenario(
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
  if (s.status !== undefined ? captured.status !== s.status : captured.status < 200 || captured.status > 299) {
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
