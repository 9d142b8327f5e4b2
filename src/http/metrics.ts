import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RootOperationNode } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Store } from '../db/dialect.js';
import type { StatementListener } from '../db/statement-watch.js';
import { AppError } from '../shared/errors.js';
import { admitUnderPressure } from './load-shedding.js';

export interface MetricsOptions {
  /** `Authorization: Bearer <token>` required when set. */
  token: string | undefined;
  /** Client addresses or CIDR ranges allowed when set. */
  allow: string[] | undefined;
}

/** A route label for requests no route matched: raw URLs never become labels. */
const UNMATCHED = '(unmatched)';

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DB_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/**
 * The application's Prometheus registry. One per app (not prom-client's global one), so that
 * several apps in one process (tests) each count their own.
 */
export interface MetricSources {
  /** Transcode jobs queued and running, across the instances (read when scraped). */
  transcodeQueue?: () => Promise<{ queued: number; running: number }>;
}

export interface Metrics {
  registry: Registry;
  /** A store's statement listener (StoreDialect.watchStatements): each statement's time, by kind. */
  observeStatement: StatementListener;
}

export function createMetrics(store: Store, sources: MetricSources = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const dbQueries = new Histogram({
    name: 'cardshelf_db_query_duration_seconds',
    help: 'Database query time, by kind of statement',
    labelNames: ['operation'],
    buckets: DB_BUCKETS,
    registers: [registry],
  });
  // One child a kind of statement, made once. (prom-client 15 still checks and hashes a child's
  // labels on each observation: the child saves building them, not that.)
  const byOperation = new Map<string, Histogram.Internal<'operation'>>();
  const observeStatement: StatementListener = (query, seconds) => {
    const operation = operationOf(query.query.kind);
    let child = byOperation.get(operation);
    if (!child) {
      child = dbQueries.labels({ operation });
      byOperation.set(operation, child);
    }
    child.observe(seconds);
  };
  const poolStats = store.dialect.poolStats?.bind(store.dialect);
  if (poolStats) {
    new Gauge({
      name: 'cardshelf_db_pool_connections',
      help: 'PostgreSQL pool connections: open (total), idle, checkouts waiting, and the configured maximum',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        const s = poolStats();
        this.set({ state: 'total' }, s.total);
        this.set({ state: 'idle' }, s.idle);
        this.set({ state: 'waiting' }, s.waiting);
        this.set({ state: 'max' }, s.max);
      },
    });
  }
  const { transcodeQueue } = sources;
  if (transcodeQueue) {
    new Gauge({
      name: 'cardshelf_transcode_jobs',
      help: 'Transcode jobs queued and running, across every instance on the database',
      labelNames: ['status'],
      registers: [registry],
      async collect() {
        // A database that does not answer leaves the gauge out of this scrape, not /metrics down.
        const depth = await transcodeQueue().catch(() => undefined);
        if (!depth) return;
        this.set({ status: 'queued' }, depth.queued);
        this.set({ status: 'running' }, depth.running);
      },
    });
  }
  return { registry, observeStatement };
}

/** `select`, `insert`, `update`, `delete`, or `raw` for sql`` (locks, DDL, pings). */
function operationOf(kind: RootOperationNode['kind']): string {
  switch (kind) {
    case 'SelectQueryNode':
      return 'select';
    case 'InsertQueryNode':
      return 'insert';
    case 'UpdateQueryNode':
      return 'update';
    case 'DeleteQueryNode':
      return 'delete';
    case 'RawNode':
      return 'raw';
    default:
      return 'other';
  }
}

/**
 * Request count and latency by route pattern and status, and `GET /metrics` (Prometheus text
 * format): closed (403) unless a token and/or addresses are configured, which it then requires.
 * Per-route traffic, queue depths and versions are not for everyone to read.
 */
export function registerMetrics(app: FastifyInstance, registry: Registry, opts: MetricsOptions): void {
  const requests = new Counter({
    name: 'cardshelf_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status_code'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'cardshelf_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by method, route pattern and status',
    labelNames: ['method', 'route', 'status_code'],
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });
  // `done`, not async: it runs for every answer and waits for nothing.
  app.addHook('onResponse', (request, reply, done) => {
    const labels = {
      method: request.method,
      // The pattern (`/wishlists/:wishlistId`), never the URL; 404s and early errors have none.
      route: request.routeOptions.url ?? UNMATCHED,
      status_code: String(reply.statusCode),
    };
    requests.inc(labels);
    latency.observe(labels, reply.elapsedTime / 1000);
    done();
  });

  const allowed = opts.allow && blockList(opts.allow);
  app.get(
    '/metrics',
    {
      schema: { hide: true },
      config: {
        // Watching an overloaded process is when metrics matter most.
        pressureHandler: admitUnderPressure,
        // Scrapers are not browsers: no page of another origin is let read them.
        cors: false,
      },
    },
    async (request, reply) => {
      if (!opts.token && !allowed) {
        throw new AppError('forbidden', 'metrics are closed: set METRICS_TOKEN and/or METRICS_ALLOW to serve them');
      }
      checkAccess(request, opts.token, allowed);
      return reply.type(registry.contentType).send(await registry.metrics());
    },
  );
}

function checkAccess(request: FastifyRequest, token: string | undefined, allowed: BlockList | undefined): void {
  if (allowed && !allowed.check(...clientAddress(request.ip))) {
    throw new AppError('forbidden', 'metrics are not served to this address');
  }
  if (token && !sameSecret(request.headers.authorization ?? '', `Bearer ${token}`)) {
    throw new AppError('unauthorized', 'metrics need the metrics token (Authorization: Bearer <METRICS_TOKEN>)', {
      'www-authenticate': 'Bearer realm="cardshelf-metrics"',
    });
  }
}

/** Compared in constant time (of equal-length digests), so the token cannot be guessed byte by byte. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** An address and its family; an IPv4 client of a dual-stack socket (`::ffff:10.1.2.3`) as IPv4. */
function clientAddress(ip: string): [string, 'ipv4' | 'ipv6'] {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped) return [mapped, 'ipv4'];
  return [ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4'];
}

/** METRICS_ALLOW entries (`10.0.0.0/8`, `127.0.0.1`, `::1`; checked by config.ts) as a BlockList. */
function blockList(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}
