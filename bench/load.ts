/**
 * The load driver: one scenario's request under autocannon for a number of seconds, with the
 * latency, the throughput and the CPU each request cost the process(es) under load.
 */
import autocannon from 'autocannon';
import type { Options } from './options.js';
import { cpuTicks, machineBusyTicks, TICKS_PER_SECOND } from './process-sampler.js';
import { requestHeaders, type Scenario } from './scenarios.js';

export interface Measured {
  rps: number;
  /** CPU time of the server (or ceiling) process(es) per request, in microseconds. */
  cpuUsPerRequest: number;
  /**
   * Cores' worth of CPU used meanwhile by processes outside this run (other engineers' tests on
   * a shared machine): the noise of the figure. 0 on an otherwise idle machine.
   */
  otherCores: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mbPerSec: number;
}

/** The processes a measurement accounts for: the target server's and the load generator's. */
export interface Watched {
  target: number[];
  others: number[];
}

/** A request's own token, and its own body where it has one (the scenario's otherwise). */
export type NextRequest = () => { token: string; body?: string };

/**
 * `seconds` of the scenario's request on 127.0.0.1:`port`, each with its own token (and body)
 * when `requestFor` is given; the CPU of `watched.target` is counted per request.
 */
export async function measure(
  opts: Pick<Options, 'connections' | 'pipelining'>,
  port: number,
  s: Scenario,
  seconds: number,
  watched: Watched,
  requestFor?: NextRequest,
): Promise<Measured> {
  const request: autocannon.Request = {
    method: s.method,
    path: s.path,
    headers: requestHeaders(s, s.token),
    ...(s.body === undefined ? {} : { body: s.body }),
  };
  if (requestFor) {
    request.setupRequest = (req) => {
      const next = requestFor();
      return { ...req, headers: { ...req.headers, authorization: `Bearer ${next.token}` }, ...(next.body === undefined ? {} : { body: next.body }) };
    };
  }
  const t0 = performance.now();
  const [target0, own0, busy0] = await Promise.all([cpuTicks(watched.target), cpuTicks(watched.others), machineBusyTicks()]);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: opts.connections,
    pipelining: opts.pipelining,
    duration: seconds,
    requests: [request],
  });
  const [target1, own1, busy1] = await Promise.all([cpuTicks(watched.target), cpuTicks(watched.others), machineBusyTicks()]);
  const wall = (performance.now() - t0) / 1000;
  const elapsed = Math.max(0.001, (Number(result.finish) - Number(result.start)) / 1000);
  const targetTicks = target1 - target0;
  const otherTicks = busy1 - busy0 - targetTicks - (own1 - own0);
  return {
    rps: Math.round(result.requests.total / elapsed),
    cpuUsPerRequest: result.requests.total > 0 ? Math.round(((targetTicks / TICKS_PER_SECOND) * 1e6) / result.requests.total) : 0,
    otherCores: Math.max(0, Math.round((otherTicks / TICKS_PER_SECOND / wall) * 100) / 100),
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
    // A 304 scenario's answers are all 304s: any other status is the failure.
    non2xx: s.status === undefined ? result.non2xx : result.requests.total - (result.statusCodeStats?.[`${s.status}`]?.count ?? 0),
    errors: result.errors,
    timeouts: result.timeouts,
    mbPerSec: Math.round((result.throughput.average / 1048576) * 10) / 10,
  };
}
