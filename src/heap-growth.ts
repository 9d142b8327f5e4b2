import v8 from 'node:v8';

/**
 * How far V8 lets its old generation grow past what the last full collection kept, before it
 * collects again: 1 + this / 100 times.
 *
 * Left to itself V8 picks the factor, up to 4x when the heap's limit is large, and the limit
 * follows the machine's memory (4.3 GB on a 24 GB machine). The server keeps ~50 MB live, so
 * under a steady load ~100 MB of garbage built up before each collection: 254 MB peak RSS in
 * three scenarios of the million-card benchmark, 182 MB with this factor; 198-201 MB in the
 * whole run, 190 MB with pg and sharp loaded on first use (bench/RESULTS.md, 2026-11-27; the
 * target is 200 MB). More frequent collections, each of a small heap, cost 0-6% more CPU a
 * request in the paired runs there, within their noise; V8's `--optimize-for-size` cost 7-22%.
 */
export const HEAP_GROWING_PERCENT = 60;

/** The operator's own say over the heap's size, which this leaves alone. */
const HEAP_FLAGS = /^--(max[-_]old[-_]space[-_]size|heap[-_]growing[-_]percent)(=|$)/;

/**
 * Sets V8's growing factor for this process unless the operator sized the heap themselves
 * (`--max-old-space-size`, `--heap-growing-percent`, on the command line or in NODE_OPTIONS).
 * V8 reads the flag again at every full collection, so setting it once the process runs takes
 * effect from the next one: this is not one of the flags that only count at start.
 */
export function boundHeapGrowth(
  given: { execArgv: readonly string[]; nodeOptions: string },
  setFlags: (flags: string) => void = v8.setFlagsFromString,
): boolean {
  const flags = [...given.execArgv, ...given.nodeOptions.split(/\s+/)];
  if (flags.some((flag) => HEAP_FLAGS.test(flag))) return false;
  setFlags(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
