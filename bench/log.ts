/**
 * The benchmark's progress lines: on stderr, so that stdout holds only the results.
 */
export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}
