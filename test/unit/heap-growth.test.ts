import { describe, expect, it } from 'vitest';
import { boundHeapGrowth, HEAP_GROWING_PERCENT } from '../../src/heap-growth.js';

/** What boundHeapGrowth would set, given the process's flags and NODE_OPTIONS. */
function setBy(execArgv: string[], nodeOptions = ''): string[] {
  const set: string[] = [];
  boundHeapGrowth({ execArgv, nodeOptions }, (flags) => set.push(flags));
  return set;
}

describe('boundHeapGrowth', () => {
  it("sets V8's growing factor when the operator did not size the heap", () => {
    expect(setBy([])).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
    expect(setBy(['--enable-source-maps'], '--trace-warnings')).toEqual([`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
  });

  it("leaves the heap to the operator's own flags, on the command line or in NODE_OPTIONS", () => {
    expect(setBy(['--max-old-space-size=512'])).toEqual([]);
    expect(setBy(['--max_old_space_size=512'])).toEqual([]);
    expect(setBy(['--heap-growing-percent=0'])).toEqual([]);
    expect(setBy([], '--enable-source-maps --max-old-space-size=160')).toEqual([]);
  });

  it('is not fooled by flags that only begin alike', () => {
    expect(setBy(['--max-old-space-size-extra=1'])).toHaveLength(1);
    expect(setBy(['--max-semi-space-size=8'])).toHaveLength(1);
  });
});
