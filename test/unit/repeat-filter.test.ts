import { describe, expect, it } from 'vitest';
import { RepeatFilter } from '../../src/shared/repeat-filter.js';

describe('RepeatFilter: one log line per kind of failure and window', () => {
  it('lets the first through, holds back repeats within the window, then reports how many', () => {
    let now = 1_000;
    const filter = new RepeatFilter(10_000, () => now);
    expect(filter.admit('unreachable ECONNREFUSED')).toBe(0);
    for (let i = 0; i < 500; i++) expect(filter.admit('unreachable ECONNREFUSED')).toBeUndefined();
    now += 9_999;
    expect(filter.admit('unreachable ECONNREFUSED')).toBeUndefined();
    now += 1;
    expect(filter.admit('unreachable ECONNREFUSED')).toBe(501);
    expect(filter.admit('unreachable ECONNREFUSED')).toBeUndefined();
  });

  it('keeps kinds apart: a new failure is logged at once', () => {
    const now = 0;
    const filter = new RepeatFilter(10_000, () => now);
    expect(filter.admit('full SQLITE_FULL')).toBe(0);
    expect(filter.admit('timeout 57014')).toBe(0);
    expect(filter.admit('full SQLITE_FULL')).toBeUndefined();
  });

  it('forgets expired kinds, so many distinct failures do not grow it without end', () => {
    let now = 0;
    const filter = new RepeatFilter(10, () => now);
    for (let i = 0; i < 10_000; i++) {
      now += 11;
      expect(filter.admit(`kind ${i}`)).toBe(0);
    }
    expect((filter as unknown as { seen: Map<string, unknown> }).seen.size).toBeLessThanOrEqual(102);
  });
});
