/**
 * One scenario, measured: the real response captured, the ceiling replaying it under the load,
 * then Cardshelf under the same load (profiled with --cpu-prof), and the two compared.
 */
import { exchange, type Captured, type Ceiling } from './ceiling.js';
import { mintAdders, mintFreshUsers, type Fixtures } from './fixtures.js';
import { lockWaitsText, sampleLockWaits, type LockWaits } from './lock-waits.js';
import { measure, type Measured, type NextRequest, type Watched } from './load.js';
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
  /** Per-request tokens (and bodies) on Cardshelf (wishlist creates, first adds), and the same for the ceiling. */
  requestFor: NextRequest | undefined;
  ceilingRequests: NextRequest | undefined;
  /** Mints the users Cardshelf may need, given the ceiling's rate (a bound on its creates). */
  mintFor(ceilingRps: number): Promise<void>;
  /** Marks a run that made more creates than the minted users could. */
  check(mine: Measured): void;
}

/**
 * Scenarios whose every request creates, each by a user minted ahead (`users`), who makes `each`
 * creates at most: the wishlist creates (the per-user limit), the first adds (one for each
 * catalogue card). The count runs on through warm-up, measurement and rounds (it is kept on the
 * fixtures), so no user makes more, and no add is a repeat.
 */
interface Creates {
  users: string[];
  each: number;
  made: { n: number };
  mint(count: number): Promise<void>;
  /** The body of the n-th create, where it differs from the scenario's. */
  body?: (n: number) => string;
}

function createsOf(f: Fixtures, s: Scenario): Creates | undefined {
  if (s.name === 'wishlist-post') {
    return { users: f.freshUsers, each: WISHLISTS_PER_USER, made: f.wishlistsMade, mint: (count) => mintFreshUsers(f, count) };
  }
  if (s.name === 'library-add-new') {
    const cards = f.catalogueCardIds;
    return {
      users: f.adders,
      each: cards.length,
      made: f.firstAdds,
      mint: (count) => mintAdders(f, count),
      body: (n) => JSON.stringify({ cardId: cards[n % cards.length] }),
    };
  }
  return undefined;
}

/** Captures the real answer of `s` on `server` (it must have the scenario's status). */
export async function prepareScenario(opts: Options, server: Server, f: Fixtures, s: Scenario): Promise<Prepared> {
  let requestFor: NextRequest | undefined;
  const creates = createsOf(f, s);
  if (creates) {
    requestFor = () => nthCreate(creates, creates.made.n++);
    await creates.mint(Math.ceil(creates.made.n / creates.each) + 2000);
  } else if (s.tokens) {
    requestFor = cyclingTokens(s.tokens);
  }

  const first = requestFor ? requestFor() : { token: s.token };
  const body = first.body ?? s.body;
  const captured = await exchange(server.base, s.method, s.path, requestHeaders(s, first.token), body);
  if (s.status !== undefined ? captured.status !== s.status : captured.status < 200 || captured.status > 299) {
    throw new Error(`${s.name}: the server answered ${captured.status}: ${captured.body.toString('utf8').slice(0, 300)}`);
  }
  if (s.name === 'library-add-200' && captured.status !== 200) throw new Error(`${s.name}: expected 200, got ${captured.status}`);
  if (s.name === 'library-add-new' && captured.status !== 201) throw new Error(`${s.name}: expected 201, got ${captured.status}`);
  if (s.replays) {
    const again = await exchange(server.base, s.method, s.path, requestHeaders(s, first.token), body);
    if (again.headers['idempotent-replayed'] !== 'true') throw new Error(`${s.name}: the second request was not a replay (${again.status})`);
  }
  return {
    s,
    captured,
    requestFor,
    // The ceiling serves the same requests: with per-request tokens (and bodies) too (that costs
    // the load generator the same), cycling over the users minted so far.
    ceilingRequests: s.tokens ? cyclingTokens(s.tokens) : creates ? cyclingCreates(creates) : undefined,
    async mintFor(ceilingRps) {
      if (!creates) return;
      // Cardshelf cannot create faster than the ceiling answers: its count, with a margin, bounds
      // the creates, and so the users needed.
      const bound = Math.ceil(((ceilingRps * (opts.warmup + opts.duration)) / creates.each) * 1.5) + 50;
      await creates.mint(bound + Math.ceil(creates.made.n / creates.each));
    },
    check(mine) {
      if (creates && creates.made.n > creates.users.length * creates.each) {
        mine.non2xx = Math.max(mine.non2xx, 1);
        log(`${s.name}: more creates than minted users could make; some were refused or repeated`);
      }
    },
  };
}

/** The ceiling replaying `p`'s answer under the scenario's load (warm-up, then measured). */
export async function measureCeiling(opts: Options, ceiling: Ceiling, server: Server, p: Prepared): Promise<Measured> {
  const serverPids = await processTree(server.child.pid as number);
  const watch: Watched = { target: [ceiling.pid], others: [process.pid, ...serverPids] };
  await ceiling.serve(p.captured);
  if (opts.warmup > 0) await measure(opts, ceiling.port, p.s, opts.warmup, watch, p.ceilingRequests);
  return measure(opts, ceiling.port, p.s, opts.duration, watch, p.ceilingRequests);
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
  if (opts.warmup > 0) await measure(opts, server.port, p.s, opts.warmup, watch, p.requestFor);
  const profiling = server.profileDir ? await startProfiles(serverPids, server.profileDir) : undefined;
  const sampling = p.s.kind === 'write' && server.databaseUrl ? await sampleLockWaits(server.databaseUrl) : undefined;
  const mine = await measure(opts, server.port, p.s, opts.duration, watch, p.requestFor);
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

function cyclingTokens(tokens: string[]): NextRequest {
  let i = 0;
  return () => ({ token: tokens[i++ % tokens.length] as string });
}

/** The n-th create's request: its user's token, and its body where it has one. */
function nthCreate({ users, each, body }: Creates, n: number): { token: string; body?: string } {
  return { token: users[Math.floor(n / each) % users.length] as string, ...(body ? { body: body(n) } : {}) };
}

/** The creates' requests again, over the users minted so far (for the ceiling: nothing is created). */
function cyclingCreates(creates: Creates): NextRequest {
  let n = 0;
  return () => nthCreate(creates, n++);
}
