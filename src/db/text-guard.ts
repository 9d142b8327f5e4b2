import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from 'kysely';
import { badRequest } from '../shared/errors.js';

const guarded = new WeakSet<DatabaseConnection>();

function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  return Array.isArray(value) && value.some(hasNul);
}

function check(query: CompiledQuery): void {
  if (query.parameters.some(hasNul)) {
    throw badRequest('text cannot contain the NUL character (U+0000)');
  }
}

/**
 * PostgreSQL cannot store U+0000 in text (it fails the statement), SQLite can. So that both
 * answer alike, and data written on SQLite can always move to PostgreSQL, no statement may send
 * it: a request carrying it (in an id, a name, a token's subject) gets 400 bad-request instead
 * of a 500 on one database and a stored value on the other. JSON documents are unaffected:
 * JSON.stringify writes the character as the escape `\u0000`.
 */
export function refuseNulText(driver: Driver): Driver {
  const acquire = driver.acquireConnection.bind(driver);
  driver.acquireConnection = async (): Promise<DatabaseConnection> => {
    // Patched in place, not wrapped: drivers recognise their own connection objects on release.
    const connection = await acquire();
    if (!guarded.has(connection)) {
      guarded.add(connection);
      // Taken off the connection to wrap them; each is called back with the connection as `this`.
      // eslint-disable-next-line @typescript-eslint/unbound-method
      const { executeQuery, streamQuery } = connection;
      connection.executeQuery = <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
        check(query);
        return executeQuery.call<DatabaseConnection, [CompiledQuery], Promise<QueryResult<R>>>(connection, query);
      };
      connection.streamQuery = <R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> => {
        check(query);
        return streamQuery.call<DatabaseConnection, [CompiledQuery, number | undefined], AsyncIterableIterator<QueryResult<R>>>(
          connection,
          query,
          chunkSize,
        );
      };
    }
    return connection;
  };
  return driver;
}
