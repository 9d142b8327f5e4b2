import { createServer, connect, type Server, type Socket } from 'node:net';
import type { ServerProcess } from './processes.js';

/**
 * A TCP proxy in front of a database that can freeze: while frozen it accepts connections and
 * reads what both sides send but passes nothing on, as a network that silently drops packets
 * does. Thawed, it passes on what it held back and carries on.
 */
export interface FreezableProxy {
  readonly port: number;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startFreezableProxy(targetPort: number): Promise<FreezableProxy> {
  let frozen = false;
  const held: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const relay = (from: Socket, to: Socket): void => {
    from.on('data', (chunk: Buffer) => {
      if (frozen) held.push(() => to.write(chunk));
      else to.write(chunk);
    });
    from.on('error', () => to.destroy());
    from.on('close', () => to.destroy());
  };
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('proxy has no port');
  return {
    port: address.port,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
      for (const send of held.splice(0)) send();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One answer as the traffic saw it. */
interface Outcome {
  /** The status, or 'no answer' when the request failed or timed out without one. */
  status: number | 'no answer';
  /** Why the answer breaks the rules (only 2xx, or 503 in the error shape with Retry-After). */
  violation?: string;
}

export interface TrafficReport {
  requests: number;
  byStatus: Record<string, number>;
  violations: string[];
  /** Card ids whose creation was answered 201. */
  acknowledged: string[];
}

export interface Traffic {
  stop(): Promise<TrafficReport>;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function request(
  base: string,
  method: string,
  path: string,
  token: string,
  body: unknown,
  timeoutMs: number,
): Promise<{ outcome: Outcome; json: any }> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    return { outcome: { status: 'no answer', violation: `${method} ${path}: no answer (${(err as Error).message})` }, json: undefined };
  }
  const text = await res.text().catch(() => '');
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const outcome: Outcome = { status: res.status };
  if (res.status >= 300) {
    if (res.status !== 503) outcome.violation = `${method} ${path}: ${res.status} ${text.slice(0, 200)}`;
    else if (json?.error?.code !== 'unavailable' || typeof json?.error?.message !== 'string') {
      outcome.violation = `${method} ${path}: 503 outside the error shape: ${text.slice(0, 200)}`;
    } else if (!res.headers.get('retry-after')) outcome.violation = `${method} ${path}: 503 without Retry-After`;
  }
  return { outcome, json };
}

/**
 * Clients sending a mix of card creations and reads to the servers in turn, each waiting for its
 * answer (at most `timeoutMs`) before the next, until stopped. Each answer is checked against
 * the rule of a failing database: a 2xx, or a 503 `unavailable` with Retry-After.
 */
export function startTraffic(
  servers: ServerProcess[],
  tokens: string[],
  opts: { clients?: number; timeoutMs: number },
): Traffic {
  const report: TrafficReport = { requests: 0, byStatus: {}, violations: [], acknowledged: [] };
  let running = true;
  let serial = 0;
  const note = (outcome: Outcome): void => {
    report.requests += 1;
    report.byStatus[outcome.status] = (report.byStatus[outcome.status] ?? 0) + 1;
    if (outcome.violation && report.violations.length < 50) report.violations.push(outcome.violation);
  };
  const client = async (c: number): Promise<void> => {
    for (let i = 0; running; i++) {
      const server = servers[(c + i) % servers.length]!;
      const token = tokens[(c + i) % tokens.length]!;
      if (i % 2 === 0) {
        serial += 1;
        const title = `Chaos ${c}-${serial}`;
        const { outcome, json } = await request(server.url, 'POST', '/content', token, { title }, opts.timeoutMs);
        note(outcome);
        if (outcome.status === 201 && typeof json?.card?.cardId === 'string') report.acknowledged.push(json.card.cardId);
      } else {
        const { outcome } = await request(server.url, 'GET', '/content/mine', token, undefined, opts.timeoutMs);
        note(outcome);
      }
      // 503s come back at once; without a pause a client would spin.
      if (servers.length > 0) await pause(10);
    }
  };
  const clients = Array.from({ length: opts.clients ?? 8 }, (_, c) => client(c));
  return {
    async stop() {
      running = false;
      await Promise.all(clients);
      return report;
    },
  };
}

/**
 * Milliseconds until every server answers a write (201) and `/readyz` (200) again, polling
 * every 100 ms; throws after `limitMs`.
 */
export async function timeToRecover(servers: ServerProcess[], token: string, limitMs: number): Promise<number> {
  const started = Date.now();
  for (const server of servers) {
    for (;;) {
      const write = await request(server.url, 'POST', '/content', token, { title: 'Recovered?' }, 5_000);
      const ready = write.outcome.status === 201 ? await request(server.url, 'GET', '/readyz', token, undefined, 5_000) : undefined;
      if (ready?.outcome.status === 200) break;
      if (Date.now() - started > limitMs) {
        throw new Error(`${server.url} did not recover within ${limitMs} ms (last: ${write.outcome.status})`);
      }
      await pause(100);
    }
  }
  return Date.now() - started;
}

/** Exits of the servers so far: none is the only right answer. */
export function exits(servers: ServerProcess[]): string[] {
  return servers
    .filter((s) => s.child.exitCode !== null || s.child.signalCode !== null)
    .map((s) => `${s.url} exited (${s.child.exitCode ?? s.child.signalCode})\n${s.stderr().slice(-2000)}${s.stdout().slice(-2000)}`);
}

/** The servers' log lines at error level or above (pino: level 50 and 60), for a failure message. */
export function errorLines(servers: ServerProcess[]): string {
  return servers
    .flatMap((s) => s.stdout().split('\n'))
    .filter((line) => /"level":(50|60)/.test(line))
    .slice(0, 10)
    .join('\n');
}

/** Where each server's log stands now: `databaseWarnings` counts from there. */
export function logMarks(servers: ServerProcess[]): number[] {
  return servers.map((s) => s.stdout().length);
}

/** How many `database unavailable` lines the servers logged since `marks`. */
export function databaseWarnings(servers: ServerProcess[], marks: number[]): number {
  return servers
    .flatMap((s, i) => s.stdout().slice(marks[i] ?? 0).split('\n'))
    .filter((line) => line.includes('"msg":"database unavailable"')).length;
}

/** A line for the test log: what a chaos run measured. */
export function summary(name: string, faults: number, report: TrafficReport, recoveredMs: number, lost: number): string {
  return `${name}: faults=${faults} requests=${report.requests} byStatus=${JSON.stringify(report.byStatus)} acknowledgedWrites=${report.acknowledged.length} lost=${lost} recoverMs=${recoveredMs}`;
}
