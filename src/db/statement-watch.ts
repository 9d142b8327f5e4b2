import type { CompiledQuery } from 'kysely';

/** Told of every statement the database ran for the application, with its time in seconds. */
export type StatementListener = (query: CompiledQuery, seconds: number) => void;

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

  report(query: CompiledQuery, seconds: number): void {
    for (const listener of this.#listeners) listener(query, seconds);
  }
}
