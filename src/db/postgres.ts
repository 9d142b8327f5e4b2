import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect, sql, type Driver, type Expression, type RawBuilder, type PostgresPool, type PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import type { PostgresConfig } from './config.js';
import type { Database } from './database.js';
import type { StoreDialect } from './dialect.js';
import { asUnavailable } from './errors.js';
import { GuardedDriver } from './guarded-driver.js';
import { listenForNotifications } from './notify-listener.js';
import { pgDriver } from './pg-driver.js';
import { tickBatchedSocket } from './pg-socket.js';
import { preparedStatement } from './prepared.js';
import { StatementWatch } from './statement-watch.js';

/**
 * How long a connection that cannot be made is tried again before the request fails: long
 * enough to ride out a quick restart of the server, short enough that an outage answers fast.
 */
const RECONNECT_WINDOW_MS = 1_000;

/** The client-side bound on a statement, past the server's own: a frozen network never answers. */
const NETWORK_MARGIN_MS = 1_000;

class GuardedPostgresDialect extends PostgresDialect {
  constructor(
    pool: PostgresPool,
    private readonly reconnectWindowMs: number,
    private readonly statements: StatementWatch,
  ) {
    super({ pool });
  }

  override createDriver(): Driver {
    return new GuardedDriver(super.createDriver(), { reconnectWindowMs: this.reconnectWindowMs, statements: this.statements, pipelined: true });
  }
}

/** How many SQL texts get a prepared statement of their own on each connection (see `named`). */
const PREPARED_TEXTS = 1_000;
const statementNames = new Map<string, string>();

/**
 * `query(text, values)` as `query({ name, text, values })`: node-postgres then prepares the
 * statement once per connection (parse and plan) and later only binds and runs it, one message
 * fewer each time and no parsing or planning on the server. Kysely sends every query as text
 * and values, so this is where a query shape becomes a kept statement. The name is a hash of
 * the text, so every connection and every instance names a shape alike. Statements without
 * values (transaction control, DDL, migrations) are left alone, and past PREPARED_TEXTS texts
 * (a shape that varies, such as `in` lists of every length) the rest run unnamed, so that no
 * connection keeps an unbounded number of statements on the server.
 */
function named(args: unknown[]): unknown[] {
  const [text, values, ...rest] = args;
  if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0) return args;
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= PREPARED_TEXTS) return args;
    name = `cs_${createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 22)}`;
    statementNames.set(text, name);
  }
  return [{ name, text, values }, ...rest];
}

/**
 * A pool whose connections never end the process and are never reused once broken:
 * - every client gets an `error` listener for its whole life. pg-pool listens only while a
 *   client is idle, so a connection dropped while checked out (between the statements of a
 *   transaction) emitted an unhandled `error` and ended the process.
 * - a client whose statement ran past `query_timeout` (the network froze) is still "queryable"
 *   to pg, with the old statement pending on it: it is destroyed on release, not pooled again.
 */
function resilientPool(config: PostgresConfig): { pool: pg.Pool; kyselyPool: PostgresPool } {
  const pool = new (pgDriver().Pool)({
    connectionString: config.url,
    max: config.poolSize,
    connectionTimeoutMillis: config.connectTimeoutMs,
    statement_timeout: config.statementTimeoutMs,
    query_timeout: config.statementTimeoutMs + NETWORK_MARGIN_MS,
    idle_in_transaction_session_timeout: config.idleInTransactionTimeoutMs,
    keepAlive: true,
    // A statement goes out while those before it on the connection are still on their way: a
    // unit of work's statements that do not wait for each other share a round trip
    // (guarded-driver.ts). Nothing here streams rows through a cursor, which pipelining refuses.
    pipeline: true,
    // What a unit of work sends in one tick goes out in one system call (pg-socket.ts).
    stream: tickBatchedSocket,
  });
  const broken = new WeakSet<pg.PoolClient>();
  // An idle connection that breaks is dropped by the pool; the next checkout opens a new one.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    // The failure reaches the statement that was running, if any: that is where it is reported.
    client.on('error', () => {});
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const result = query(...named(args));
      if (result instanceof Promise) {
        result.catch((err: unknown) => {
          if (asUnavailable(err)?.reason === 'timeout' && !(err as { code?: unknown }).code) broken.add(client);
        });
      }
      return result;
    }) as typeof client.query;
  });
  const kyselyPool: PostgresPool = {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      const release = client.release.bind(client);
      // pg-pool destroys a client released with an error instead of pooling it again.
      client.release = ((err?: Error | boolean) =>
        release(err ?? (broken.has(client) ? new Error('statement timed out on the client side') : undefined)));
      return client;
    },
    end: () => pool.end(),
  };
  return { pool, kyselyPool };
}

/**
 * The advisory-lock id of a key: the first 64 bits of its SHA-256, as a signed bigint (the type
 * pg_advisory_xact_lock takes). SHA-256 rather than a server hash function (hashtext) so that it
 * does not depend on the server version, and so that a key computed in SQL (`lockIdOf`) gets the
 * same id. Two keys sharing an id only wait for each other.
 */
function advisoryLockId(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest().readBigInt64BE(0).toString();
}

/** `advisoryLockId` in SQL, of a key the statement computes (sha256 is in PostgreSQL 11 and later). */
function lockIdOf(key: Expression<string>): RawBuilder<string> {
  return sql<string>`cast(cast(('x' || encode(substring(sha256(convert_to(${key}, 'UTF8')) from 1 for 8), 'hex')) as bit(64)) as bigint)`;
}

/** The lock statement, kept (db/prepared.ts): a unit of work's locks go out with its first reads. */
const lockById = preparedStatement((db, { id }: { id: string }) => db.selectNoFrom(sql`pg_advisory_xact_lock(cast(${id} as bigint))`.as('locked')));

function lockExpression(key: Expression<string>): RawBuilder<unknown> {
  return sql`pg_advisory_xact_lock(${lockIdOf(key)})`;
}

export function postgresDialect(config: PostgresConfig): StoreDialect {
  const { pool, kyselyPool } = resilientPool(config);
  const statements = new StatementWatch();
  return {
    name: 'postgres',
    createKysely: () =>
      new Kysely<Database>({
        dialect: new GuardedPostgresDialect(kyselyPool, Math.min(RECONNECT_WINDOW_MS, config.connectTimeoutMs), statements),
      }),
    watchStatements: (listener) => statements.add(listener),
    // Transaction-scoped: every instance on the database waits for it, and commit or rollback
    // releases it, so a request that fails half-way cannot leave it held.
    lockKey: async (trx, key) => {
      await lockById(trx, { id: advisoryLockId(key) });
    },
    lockKeyExpression: lockExpression,
    notifyOnCommit: (channel) => sql`pg_notify(${channel}, '')`,
    wakeOnCommit: (channel, wake, { onError }) =>
      listenForNotifications(config, channel, { onNotify: wake, onListening: wake, onError }),
    // `by default` rather than `always`: rows copied from another database keep their ids.
    autoIncrementPrimaryKey: (col) => col.generatedByDefaultAsIdentity().primaryKey(),
    // The database's default collation may be linguistic (en_US ignores punctuation, mixes case);
    // "C" compares bytes, which for UTF-8 is code point order, as SQLite does.
    text: sql`text collate "C"`,
    skipLocked: true,
    pipelined: true,
    analyze: async (db) => {
      await sql`analyze`.execute(db);
    },
    poolStats: () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: config.poolSize,
    }),
  };
}
