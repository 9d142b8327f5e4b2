import type { Compilable, CompiledQuery } from 'kysely';
import { directStatementOf } from './direct-statement.js';
import type { Db } from './unit-of-work.js';

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
): (db: Db, ...args: A) => Promise<R[]> {
  // Unique stand-ins: strings no caller sends, found again among the compiled parameters.
  const standIns = Array.from({ length: arity }, (_, i) => `\u0000prepared-argument-${i}\u0000`);
  const compiled: CompiledQuery<R> = build(...(standIns as A)).compile();
  const slots = compiled.parameters.map((p) => (typeof p === 'string' ? standIns.indexOf(p) : -1));
  for (let i = 0; i < arity; i++) {
    if (!slots.includes(i)) throw new Error(`prepared query: argument ${i} is not a parameter of ${compiled.sql}`);
  }
  return async (on, ...args) => {
    const parameters = compiled.parameters.map((p, i) => {
      const slot = slots[i] as number;
      return slot === -1 ? p : args[slot];
    });
    const query = { ...compiled, parameters };
    const rows = directStatementOf(on)?.(query);
    if (rows) return rows as R[];
    const result = await on.executeQuery<R>(query);
    return result.rows;
  };
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
): (db: Db, shape: S, ...args: A) => Promise<R[]> {
  type Run = (db: Db, ...args: A) => Promise<R[]>;
  const compiled = new WeakMap<object, Map<string, Run>>();
  return (db, shape, ...args) => {
    const kind = db.getExecutor().adapter;
    let shapes = compiled.get(kind);
    if (!shapes) compiled.set(kind, (shapes = new Map<string, Run>()));
    const key = keyOf(shape);
    let run = shapes.get(key);
    if (!run) {
      run = prepared<A, R>((...standIns) => build(db, shape, ...standIns), typeof arity === 'function' ? arity(shape) : arity);
      shapes.set(key, run);
    }
    return run(db, ...args);
  };
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
): (db: Db, ...args: A) => Promise<R[]> {
  const run = preparedPerShape<undefined, A, R>(() => '', (db, _shape, ...args) => build(db, ...args), arity);
  return (db, ...args) => run(db, undefined, ...args);
}
