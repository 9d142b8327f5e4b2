import type { Compilable, CompiledQuery } from 'kysely';
import { directStatementOf, unitConnectionOf } from './direct-statement.js';
import type { Db } from './unit-of-work.js';

/**
 * A kept statement: run on the database or a unit of work's transaction, it answers its rows.
 * `withCommit` sends it as a unit of work's last word, answered with the commit (on PostgreSQL
 * one round trip for both; its failure fails the commit): for a statement whose rows the work
 * does not need, such as the live event (modules/events/publish.ts).
 */
export type PreparedRun<A extends unknown[], R> = ((db: Db, ...args: A) => Promise<R[]>) & {
  withCommit(db: Db, ...args: A): Promise<void>;
};

/**
 * A query of the hottest reads, built and compiled by Kysely once instead of on every request
 * (building freezes and visits a tree of nodes, compiling walks it again: a good part of a small
 * read's CPU). `build` receives stand-ins for its arguments and uses them where values go; the
 * function returned runs the compiled SQL with the real values in their places, on `db` or a
 * transaction. The SQL text never changes, so SQLite's kept statements (db/sqlite.ts) and the
 * statement counts see one statement per query.
 *
 * Only for queries whose shape does not depend on the arguments (no `in` lists of varying length,
 * no optional clauses): a shape that varies needs one prepared query per shape.
 */
export function prepared<A extends unknown[], R>(
  build: (...args: { [K in keyof A]: A[K] }) => Compilable<R>,
  arity: A['length'],
): PreparedRun<A, R> {
  // Unique stand-ins: strings no caller sends, found again among the compiled parameters.
  const standIns = Array.from({ length: arity }, (_, i) => `\u0000prepared-argument-${i}\u0000`);
  const compiled: CompiledQuery<R> = build(...(standIns as A)).compile();
  const slots = compiled.parameters.map((p) => (typeof p === 'string' ? standIns.indexOf(p) : -1));
  for (let i = 0; i < arity; i++) {
    if (!slots.includes(i)) throw new Error(`prepared query: argument ${i} is not a parameter of ${compiled.sql}`);
  }
  const queryOf = (args: A): CompiledQuery<R> => {
    const parameters = compiled.parameters.map((p, i) => {
      const slot = slots[i] as number;
      return slot === -1 ? p : args[slot];
    });
    return { ...compiled, parameters };
  };
  const run = async (on: Db, ...args: A): Promise<R[]> => {
    const query = queryOf(args);
    const rows = directStatementOf(on)?.(query);
    if (rows) return rows as R[];
    const result = await (unitConnectionOf(on) ?? on).executeQuery<R>(query);
    return result.rows;
  };
  const withCommit = async (on: Db, ...args: A): Promise<void> => {
    const unit = unitConnectionOf(on);
    if (unit) await unit.sendWithCommit(queryOf(args));
    else await run(on, ...args);
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
export function preparedPerShape<S, A extends unknown[], R>(
  keyOf: (shape: S) => string,
  build: (db: Db, shape: S, ...args: { [K in keyof A]: A[K] }) => Compilable<R>,
  /** How many arguments; by shape when the shape decides it (a list's slots). */
  arity: A['length'] | ((shape: S) => number),
): PreparedRun<[shape: S, ...args: A], R> {
  type Run = PreparedRun<A, R>;
  const compiled = new WeakMap<object, Map<string, Run>>();
  const runOf = (db: Db, shape: S): Run => {
    const kind = db.getExecutor().adapter;
    let shapes = compiled.get(kind);
    if (!shapes) compiled.set(kind, (shapes = new Map<string, Run>()));
    const key = keyOf(shape);
    let run = shapes.get(key);
    if (!run) {
      run = prepared<A, R>((...standIns) => build(db, shape, ...standIns), typeof arity === 'function' ? arity(shape) : arity);
      shapes.set(key, run);
    }
    return run;
  };
  return Object.assign((db: Db, shape: S, ...args: A) => runOf(db, shape)(db, ...args), {
    withCommit: (db: Db, shape: S, ...args: A) => runOf(db, shape).withCommit(db, ...args),
  });
}

/**
 * A statement of fixed form (no shape), compiled once per kind of database (see
 * `preparedPerShape`) and run on the database or a unit of work's transaction: for the
 * statements every write runs (reading the row it changes, the change counters, the live
 * event), whose building and compiling was a fifth of a small write's CPU.
 */
export function preparedStatement<A extends unknown[], R>(
  build: (db: Db, ...args: { [K in keyof A]: A[K] }) => Compilable<R>,
  arity: A['length'],
): PreparedRun<A, R> {
  const run = preparedPerShape<undefined, A, R>(() => '', (db, _shape, ...args) => build(db, ...args), arity);
  return Object.assign((db: Db, ...args: A) => run(db, undefined, ...args), {
    withCommit: (db: Db, ...args: A) => run.withCommit(db, undefined, ...args),
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
