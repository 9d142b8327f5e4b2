import { describe, expect, it } from 'vitest';
import { asUnavailable, DatabaseUnavailable } from '../../src/db/errors.js';

const withCode = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

describe('asUnavailable: which failures of the database are "try again later"', () => {
  it.each([
    ['PostgreSQL terminating connection (57P01)', withCode('57P01', 'terminating connection due to administrator command'), 'unreachable', 2],
    ['PostgreSQL starting up (57P03)', withCode('57P03', 'the database system is starting up'), 'unreachable', 2],
    ['a connection exception (08006)', withCode('08006'), 'unreachable', 2],
    ['statement_timeout (57014)', withCode('57014', 'canceling statement due to statement timeout'), 'timeout', 2],
    ['lock_timeout (55P03)', withCode('55P03'), 'timeout', 2],
    ['too many connections (53300)', withCode('53300'), 'busy', 1],
    ['a deadlock (40P01)', withCode('40P01'), 'busy', 1],
    ['disk full (53100)', withCode('53100'), 'full', 10],
    ['a read-only transaction (25006)', withCode('25006'), 'read-only', 10],
    ['refused TCP connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), 'unreachable', 2],
    ['reset TCP connection', withCode('ECONNRESET'), 'unreachable', 2],
    ['pg: Connection terminated unexpectedly', new Error('Connection terminated unexpectedly'), 'unreachable', 2],
    ['pg-pool: connect wait over', new Error('timeout exceeded when trying to connect'), 'timeout', 2],
    ['pg: query_timeout', new Error('Query read timeout'), 'timeout', 2],
    ['SQLITE_BUSY', withCode('SQLITE_BUSY', 'database is locked'), 'busy', 1],
    ['SQLITE_BUSY_SNAPSHOT', withCode('SQLITE_BUSY_SNAPSHOT'), 'busy', 1],
    ['SQLITE_FULL', withCode('SQLITE_FULL', 'database or disk is full'), 'full', 10],
    ['SQLITE_READONLY_DBMOVED', withCode('SQLITE_READONLY_DBMOVED'), 'read-only', 10],
    ['SQLITE_IOERR_WRITE', withCode('SQLITE_IOERR_WRITE'), 'storage', 10],
    ['SQLITE_CORRUPT', withCode('SQLITE_CORRUPT'), 'storage', 10],
  ])('%s is %s, Retry-After %i', (_what, err, reason, retryAfter) => {
    const failure = asUnavailable(err);
    expect(failure).toBeInstanceOf(DatabaseUnavailable);
    expect(failure?.reason).toBe(reason);
    expect(failure?.retryAfterSeconds).toBe(retryAfter);
    expect(failure?.cause).toBe(err);
  });

  it.each([
    ['a unique violation (23505)', withCode('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error (42601)', withCode('42601')],
    ['SQLITE_CONSTRAINT_PRIMARYKEY', withCode('SQLITE_CONSTRAINT_PRIMARYKEY')],
    ['SQLITE_ERROR', withCode('SQLITE_ERROR', 'no such table: x')],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['not an Error', 'Connection terminated'],
  ])('%s keeps its own meaning (undefined)', (_what, err) => {
    expect(asUnavailable(err)).toBeUndefined();
  });

  it('says in one line what failed, with the code, for the log (never for the client)', () => {
    const failure = asUnavailable(withCode('57P01', 'terminating connection due to administrator command\nDETAIL: x'));
    expect(failure?.detail).toBe('57P01: terminating connection due to administrator command');
    expect(failure?.message).toBe('the database cannot be reached');
  });

  it('finds a refused connection inside an AggregateError (every address of a host refused)', () => {
    const err = new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'all failed');
    expect(asUnavailable(err)?.reason).toBe('unreachable');
  });
});
