import type { CompiledQuery } from 'kysely';

/**
 * Told of every statement the database ran for the application, with its time in seconds, and
 * whether it went out while no other statement of its connection was on the way: a round trip
 * of its own (PostgreSQL sends statements that do not wait for each other together; see
 * guarded-driver.ts). Every statement of SQLite's in-process connection is its own.
 */
export type StatementListener = (query: CompiledQuery, seconds: number, roundTrip: boolean) => void;

/**
 * The listeners of one store's statements (the metrics' query timing, the tests' statement
 * counts). The guarded driver reports each statement that succeeded, from where it runs it: one
 * place that sees every query, whether built, compiled ahead or raw, at the cost of two clock
 * readings and a call, and none of that when nothing listens.
 */
export class StatementWatch {
  #listeners: readonly StatementListener[] = [];

  get active(): boolean {
    return this.#listeners.length > 0;
  }

  /** Adds a listener; the function returned removes it. */
  add(listener: StatementListener): () => void {
    this.#listeners = [...this.#listeners, listener];
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  report(query: CompiledQuery, seconds: number, roundTrip = true): void {
    for (const listener of this.#listeners) listener(query, seconds, roundTrip);
  }
}
