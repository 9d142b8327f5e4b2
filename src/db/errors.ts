/**
 * Why the database cannot serve a request right now. None of these is the caller's fault, and
 * each can pass without a restart: the edge answers 503 with `Retry-After`.
 */
export type UnavailableReason =
  /** No connection could be made, or the one in use was dropped. */
  | 'unreachable'
  /** A statement, lock or connection wait ran past its configured bound. */
  | 'timeout'
  /** The database is overloaded or another writer holds it (SQLITE_BUSY, too many connections, deadlock). */
  | 'busy'
  /** Out of disk space. */
  | 'full'
  /** The database refuses writes (read-only file or server, immutable file). */
  | 'read-only'
  /** The SQLite database file (or its directory) is no longer where it was opened. */
  | 'moved'
  /** The storage under the database fails (I/O error, damaged or unreadable file). */
  | 'storage';

/** Seconds a client should wait before trying again, by reason. */
const RETRY_AFTER_SECONDS: Record<UnavailableReason, number> = {
  unreachable: 2,
  timeout: 2,
  busy: 1,
  full: 10,
  'read-only': 10,
  moved: 10,
  storage: 10,
};

const MESSAGES: Record<UnavailableReason, string> = {
  unreachable: 'the database cannot be reached',
  timeout: 'the database did not answer in time',
  busy: 'the database is busy',
  full: 'the database is out of space',
  'read-only': 'the database refuses writes',
  moved: 'the database file is no longer where it was opened',
  storage: 'the storage under the database is failing',
};

/** The database layer's own error: the edge maps it to 503 `unavailable`. */
export class DatabaseUnavailable extends Error {
  readonly retryAfterSeconds: number;
  constructor(
    readonly reason: UnavailableReason,
    options?: { cause?: unknown },
  ) {
    super(MESSAGES[reason], options);
    this.name = 'DatabaseUnavailable';
    this.retryAfterSeconds = RETRY_AFTER_SECONDS[reason];
  }

  /** The underlying failure in one line (for logs: the database's words, never sent to clients). */
  get detail(): string {
    const cause = this.cause;
    if (!(cause instanceof Error)) return this.message;
    const code = (cause as { code?: unknown }).code;
    return `${typeof code === 'string' ? `${code}: ` : ''}${cause.message}`.split('\n')[0] ?? this.message;
  }
}

/** PostgreSQL SQLSTATE codes (https://www.postgresql.org/docs/15/errcodes-appendix.html). */
function postgresReason(code: string): UnavailableReason | undefined {
  if (code.startsWith('08')) return 'unreachable'; // connection exception
  switch (code) {
    case '57P01': // admin_shutdown (pg_terminate_backend, server stopping)
    case '57P02': // crash_shutdown
    case '57P03': // cannot_connect_now (starting up, shutting down)
    case '57P05': // idle_session_timeout
      return 'unreachable';
    case '57014': // query_canceled: statement_timeout
    case '55P03': // lock_not_available: lock_timeout
    case '25P03': // idle_in_transaction_session_timeout
      return 'timeout';
    case '53000': // insufficient_resources
    case '53200': // out_of_memory
    case '53300': // too_many_connections
    case '53400': // configuration_limit_exceeded
    case '40001': // serialization_failure
    case '40P01': // deadlock_detected
      return 'busy';
    case '53100': // disk_full
      return 'full';
    case '25006': // read_only_sql_transaction (standby, default_transaction_read_only)
      return 'read-only';
    case '58030': // io_error
    case 'XX001': // data_corrupted
    case 'XX002': // index_corrupted
      return 'storage';
    default:
      return undefined;
  }
}

/** SQLite result codes, as better-sqlite3 names them (extended codes start with the primary). */
function sqliteReason(code: string): UnavailableReason | undefined {
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
  if (code === 'SQLITE_FULL') return 'full';
  if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_PERM' || code === 'SQLITE_AUTH') return 'read-only';
  if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN')) return 'storage';
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB' || code === 'SQLITE_PROTOCOL') return 'storage';
  return undefined;
}

/** Socket errors of Node (the database server is down, refuses, or the network is gone). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
]);

/**
 * node-postgres reports a lost or never-made connection with plain Errors and these messages
 * (pg 8: client.js, pg-pool index.js); a client whose query ran past `query_timeout` says so too.
 */
const PG_CONNECTION_MESSAGES: [RegExp, UnavailableReason][] = [
  [/^Connection terminated/, 'unreachable'],
  [/not queryable/, 'unreachable'],
  [/^Client was closed/, 'unreachable'],
  [/^Cannot use a pool after calling end/, 'unreachable'],
  [/^timeout exceeded when trying to connect/, 'timeout'],
  [/^Query read timeout/, 'timeout'],
];

/**
 * The database failure behind `err`, as a DatabaseUnavailable, or undefined when `err` is
 * anything else (a constraint violation, a bug): those keep their own meaning.
 */
export function asUnavailable(err: unknown): DatabaseUnavailable | undefined {
  if (err instanceof DatabaseUnavailable) return err;
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  let reason: UnavailableReason | undefined;
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_')) reason = sqliteReason(code);
    else if (SOCKET_CODES.has(code)) reason = 'unreachable';
    else if (/^[0-9A-Z]{5}$/.test(code)) reason = postgresReason(code);
  }
  reason ??= PG_CONNECTION_MESSAGES.find(([pattern]) => pattern.test(err.message))?.[1];
  // AggregateError: Node's connect to every address of a host failed.
  if (!reason && err instanceof AggregateError && err.errors.some((e) => asUnavailable(e)?.reason === 'unreachable')) {
    reason = 'unreachable';
  }
  return reason && new DatabaseUnavailable(reason, { cause: err });
}

/**
 * A statement would carry U+0000 in a text parameter. PostgreSQL cannot store it in text (it
 * fails the statement) and SQLite can: refused on both, so that both answer alike and data
 * written on SQLite can always move to PostgreSQL. The edge maps it to 400: the text came from
 * the caller (an id in the path, a token's subject). JSON documents are unaffected:
 * JSON.stringify writes the character as the escape `\u0000`.
 */
export class UnstorableText extends Error {
  constructor() {
    super('text cannot contain the NUL character (U+0000)');
    this.name = 'UnstorableText';
  }
}
