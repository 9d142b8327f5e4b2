import type { Config } from '../config.js';

/**
 * What every command shares: its exit codes, its refusals and its lines on stderr (the `cardshelf`
 * command, src/cli.ts).
 */

/**
 * The exit codes of every command (README, "Command line"). Anything thrown that is not one
 * of the refusals below ends as FAILED (bin/cardshelf.js, src/main.ts).
 */
export const EXIT = {
  OK: 0,
  /** It ran and failed: the database unreachable, a worker failing, the shutdown deadline passed. */
  FAILED: 1,
  /** Refused before doing anything: the command line, the settings, or what was asked cannot be done as given. */
  USAGE: 2,
} as const;

/** A refusal with a message for the operator: exit 2, nothing done. */
export class Refused extends Error {}

export const err = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/**
 * A command's action: the settings are read when it runs (once the command line is known to be
 * well-formed), and its exit code is kept for main to answer.
 */
export type Run = <A extends unknown[]>(
  command: (config: Readonly<Config>, ...args: A) => Promise<number>,
) => (...args: A) => Promise<void>;
