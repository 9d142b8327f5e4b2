import type { Compilable, CompiledQuery } from 'kysely';
import { directStatementOf, unitConnectionOf } from './direct-statement.js';
import type { Db } from './unit-of-work.js';

/**
 * A kept statement: run on the database or a unit of work's transaction with its parameters by
 * name, it answers its rows. `withCommit` sends it as a unit of work's last word, answered with
 * the commit (on PostgreSQL one round trip for both; its failure fails the commit): for a
 * statement whose rows the work does not need, such as the live event (modules/events/publish.ts).
 */
export type PreparedRun<P, R> = ((db: Db, params: P) => Promise<R[]>) & {
  withCommit(db: Db, params: P): Promise<void>;
};

/** The stand-in of parameter `name` in a statement built once: a string no caller sends. */
const STAND_IN = '\u0000prepared:';
const standIn = (name: string): string => `${STAND_IN}${name}\u0000`;
/** The name a compiled parameter stands in for, if it is a stand-in. */
const nameOf = (p: unknown): string | undefined =>
  typeof p === 'string' && p.startsWith(STAND_IN) && p.endsWith('\u0000') ? p.slice(STAND_IN.length, -1) : undefined;

/** Parameters whose every member is its own stand-in, whatever its name; `read` collects the names used. */
const standInsFor = (read: Set<string>): object =>
  new Proxy([], {
    get: (_target, name) => {
      if (typeof name !== 'string') return undefined;
      read.add(name);
      return standIn(name);
    },
  });

/**
 * A query of the hottest reads, built and compiled by Kysely once instead of on every request
 * (building freezes and visits a tree of nodes, compiling walks it again: a good part of a small
 * read's CPU). `build` receives its parameters by name, as stand-ins it uses where values go
 * (destructured or read as members; never listed, as `values(params)` would); the function
 * returned runs the compiled SQL with the real values in their places, on `db` or a transaction.
 * Named, two parameters of one type cannot be swapped unnoticed. A list of values is a list
 * parameter (its members named by their index: `params[0]`), not a member holding a list. The
 * SQL text never changes, so SQLite's kept statements (db/sqlite.ts) and the statement counts
 * see one statement per query.
 *
 * Only for queries whose shape does not depend on the parameters (no `in` lists of varying
 * length, no optional clauses): a shape that varies needs one prepared query per shape.
 */
export function prepared<P extends object, R>(build: (params: P) => Compilable<R>): PreparedRun<P, R> {
  const read = new Set<string>();
  const compiled: CompiledQuery<R> = build(standInsFor(read) as P).compile();
  const names = compiled.parameters.map(nameOf);
  // A member read and not placed as a value (a list held in a member, say): its values would not reach the SQL.
  for (const name of read) {
    if (!names.includes(name)) throw new Error(`prepared query: parameter ${name} is not a value of ${compiled.sql}`);
  }
  // A list's members by number: a string key on an array is converted on every read.
  const keys = names.map((name) => (name !== undefined && /^\d+$/.test(name) ? Number(name) : name));
  const queryOf = (params: P): CompiledQuery<R> => {
    const given = params as Record<string | number, unknown>;
    const parameters = compiled.parameters.map((p, i) => {
      const key = keys[i];
      return key === undefined ? p : given[key];
    });
    return { ...compiled, parameters };
  };
  const run = async (on: Db, params: P): Promise<R[]> => {
    const query = queryOf(params);
    const rows = directStatementOf(on)?.(query);
    if (rows) return rows as R[];
    const result = await (unitConnectionOf(on) ?? on).executeQuery<R>(query);
    return result.rows;
  };
  const withCommit = async (on: Db, params: P): Promise<void> => {
    const unit = unitConnectionOf(on);
    if (unit) await unit.sendWithCommit(queryOf(params));
    else await run(on, params);
  };
  return Object.assign(run, { withCommit });
}

/**
 * `prepared` for a repository function that receives its database on each call, with a query
 * whose form depends on a `shape` (such as the counters it selects): built and compiled on first
 * use for each kind of database and each shape (`keyOf` names it), then reused.
 *
 * The compiled form is kept per dialect adapter, which a Kysely instance shares with every
 * transaction it opens: a statement compiled on the database serves a unit of work's
 * transaction too (and the other way round), so write paths gain as much as reads.
 */
export function preparedPerShape<S, P extends object, R>(
  keyOf: (shape: S) => string,
  build: (db: Db, shape: S, params: P) => Compilable<R>,
): ((db: Db, shape: S, params: P) => Promise<R[]>) & { withCommit(db: Db, shape: S, params: P): Promise<void> } {
  type Run = PreparedRun<P, R>;
  const compiled = new WeakMap<object, Map<string, Run>>();
  const runOf = (db: Db, shape: S): Run => {
    const kind = db.getExecutor().adapter;
    let shapes = compiled.get(kind);
    if (!shapes) compiled.set(kind, (shapes = new Map<string, Run>()));
    const key = keyOf(shape);
    let run = shapes.get(key);
    if (!run) {
      run = prepared<P, R>((params) => build(db, shape, params));
      shapes.set(key, run);
    }
    return run;
  };
  return Object.assign((db: Db, shape: S, params: P) => runOf(db, shape)(db, params), {
    withCommit: (db: Db, shape: S, params: P) => runOf(db, shape).withCommit(db, params),
  });
}

/**
 * A statement of fixed form (no shape), compiled once per kind of database (see
 * `preparedPerShape`) and run on the database or a unit of work's transaction: for the
 * statements every write runs (reading the row it changes, the change counters, the live
 * event), whose building and compiling was a fifth of a small write's CPU.
 */
export function preparedStatement<P extends object, R>(build: (db: Db, params: P) => Compilable<R>): PreparedRun<P, R> {
  const run = preparedPerShape<undefined, P, R>(() => '', (db, _shape, params) => build(db, params));
  return Object.assign((db: Db, params: P) => run(db, undefined, params), {
    withCommit: (db: Db, params: P) => run.withCommit(db, undefined, params),
  });
}

/**
 * A built statement whose rows the work does not need, sent as a unit of work's last words:
 * answered with the commit on a pipelined store (`PreparedRun.withCommit`), run at once elsewhere.
 */
export async function withCommit(db: Db, statement: Compilable<unknown>): Promise<void> {
  const unit = unitConnectionOf(db);
  if (unit) await unit.sendWithCommit(statement.compile());
  else await db.executeQuery(statement.compile());
}
