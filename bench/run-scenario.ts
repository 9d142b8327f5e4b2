/**
 * One scenario, measured: the real response captured, the ceiling replaying it under the load,
 * then Cardshelf under the same load (profiled with --cpu-prof), and the two compared.
 */
import { exchange, type Captured, type Ceiling } from './ceiling.js';
import { mintFreshUsers, type Fixtures } from './fixtures.js';
import { lockWaitsText, sampleLockWaits, type LockWaits } from './lock-waits.js';
import { measure, type Measured, type Watched } from './load.js';
import { log } from './log.js';
import type { Options } from './options.js';
import { memoryOf, processTree } from './process-sampler.js';
import type { Summary } from './profile-summary.js';
import type { ScenarioResult } from './report.js';
import { requestHeaders, WISHLISTS_PER_USER, type Scenario } from './scenarios.js';
import { startProfiles, type Server } from './server.js';

export function targetMet(s: Scenario, c: Measured, ratio: number): boolean {
  if (s.target.ratio !== undefined && ratio < s.target.ratio) return false;
  if (s.target.p99Ms !== undefined && c.p99 >= s.target.p99Ms) return false;
  if (s.target.rps !== undefined && c.rps < s.target.rps) return false;
  return true;
}

/** A scenario ready to run on one server: its captured answer and its tokens. */
export interface Prepared {
  s: Scenario;
  captured: Captured;
  /** Per-request tokens on Cardshelf (wishlist creates), and the same for the ceiling. */
  tokenFor: (() => string) | undefined;
  ceilingTokens: (() => string) | undefined;
  /** Mints the users Cardshelf may need, given the ceiling's rate (a bound on its creates). */
  mintFor(ceilingRps: number): Promise<void>;
  /** Marks a run that made more creates than the minted users could. */
  check(mine: Measured): void;
}

/** Captures the real answer of `s` on `server` (it must have the scenario's status). */
export async function prepareScenario(opts: Options, server: Server, f: Fixtures, s: Scenario): Promise<Prepared> {
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
  } else if (s.tokens) {
    tokenFor = cycling(s.tokens);
  }

  const firstToken = tokenFor ? tokenFor() : s.token;
  const captured = await exchange(server.base, s.method, s.path, requestHeaders(s, firstToken), s.body);
  if (s.status !== undefined ? captured.status !== s.status : captured.status < 200 || captured.status > 299) {
    throw new Error(`${s.name}: the server answered ${captured.status}: ${captured.body.toString('utf8').slice(0, 300)}`);
  }
  if (s.name === 'library-add-200' && captured.status !== 200) throw new Error(`${s.name}: expected 200, got ${captured.status}`);
  if (s.replays) {
    const again = await exchange(server.base, s.method, s.path, requestHeaders(s, firstToken), s.body);
    if (again.headers['idempotent-replayed'] !== 'true') throw new Error(`${s.name}: the second request was not a replay (${again.status})`);
  }
  return {
    s,
    captured,
    tokenFor,
    // The ceiling serves the same requests: with per-request tokens too (that costs the load
    // generator the same), cycling over the users minted so far.
    ceilingTokens: s.tokens ? cycling(s.tokens) : tokenFor ? cycling(f.freshUsers) : undefined,
    async mintFor(ceilingRps) {
      if (!tokenFor || s.tokens) return;
      // Cardshelf cannot create faster than the ceiling answers: its count, with a margin, bounds
      // the creates, and so the users needed.
      const bound = Math.ceil(((ceilingRps * (opts.warmup + opts.duration)) / WISHLISTS_PER_USER) * 1.5) + 50;
      await mintFreshUsers(f, bound + Math.ceil(creates / WISHLISTS_PER_USER));
    },
    check(mine) {
      if (tokenFor && !s.tokens && creates > f.freshUsers.length * WISHLISTS_PER_USER) {
        mine.non2xx = Math.max(mine.non2xx, 1);
        log(`${s.name}: more creates than minted users could make; some were refused`);
      }
    },
  };
}

/** The ceiling replaying `p`'s answer under the scenario's load (warm-up, then measured). */
export async function measureCeiling(opts: Options, ceiling: Ceiling, server: Server, p: Prepared): Promise<Measured> {
  const serverPids = await processTree(server.child.pid as number);
  const watch: Watched = { target: [ceiling.pid], others: [process.pid, ...serverPids] };
  await ceiling.serve(p.captured);
  if (opts.warmup > 0) await measure(opts, ceiling.port, p.s, opts.warmup, watch, p.ceilingTokens);
  return measure(opts, ceiling.port, p.s, opts.duration, watch, p.ceilingTokens);
}

/** Cardshelf under the scenario's load (warm-up, then measured; profiled with --cpu-prof). */
export async function measureServer(
  opts: Options,
  server: Server,
  ceiling: Ceiling,
  p: Prepared,
  ceilingRps: number,
): Promise<{ mine: Measured; profile: Summary | undefined; lockWaits: LockWaits | undefined }> {
  const serverPids = await processTree(server.child.pid as number);
  const watch: Watched = { target: serverPids, others: [process.pid, ceiling.pid] };
  await p.mintFor(ceilingRps);
  if (opts.warmup > 0) await measure(opts, server.port, p.s, opts.warmup, watch, p.tokenFor);
  const profiling = server.profileDir ? await startProfiles(serverPids, server.profileDir) : undefined;
  const sampling = p.s.kind === 'write' && server.databaseUrl ? await sampleLockWaits(server.databaseUrl) : undefined;
  const mine = await measure(opts, server.port, p.s, opts.duration, watch, p.tokenFor);
  const lockWaits = await sampling?.stop();
  const profile = profiling ? await profiling.stop() : undefined;
  p.check(mine);
  if (lockWaits) log(`${p.s.name}: ${lockWaitsText(lockWaits)}`);
  return { mine, profile, lockWaits };
}

export async function runScenario(
  opts: Options,
  server: Server,
  ceiling: Ceiling,
  f: Fixtures,
  s: Scenario,
): Promise<ScenarioResult> {
  const p = await prepareScenario(opts, server, f, s);
  const ceil = await measureCeiling(opts, ceiling, server, p);
  const { mine, profile, lockWaits } = await measureServer(opts, server, ceiling, p, ceil.rps);
  const note = [s.note, lockWaits && lockWaitsText(lockWaits)].filter(Boolean).join('; ');
  const ratio = ceil.rps > 0 ? mine.rps / ceil.rps : 0;
  const { rssMB } = await memoryOf(server.child.pid as number);
  return {
    name: s.name,
    kind: s.kind,
    request: `${s.method} ${s.route ?? s.path}`,
    status: p.captured.status,
    responseBytes: p.captured.body.length,
    ...(note ? { note } : {}),
    ...(lockWaits ? { lockWaits } : {}),
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
