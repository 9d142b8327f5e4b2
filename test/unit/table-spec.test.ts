import { describe, expect, it } from 'vitest';
import { TABLES } from '../../src/transfer/archive-format.js';
import { tableSpec } from '../../src/transfer/table-spec.js';

/**
 * The archive's table specs are checked against the database's types (src/transfer/table-spec.ts):
 * `npm test` runs `tsc` over this file first, so each `@ts-expect-error` below must stay an error.
 */
describe('tableSpec', () => {
  const spec = { order: ['scope'], keys: [['scope']] };

  it('takes a spec that names every column of its table, carried or left out', () => {
    const counters = tableSpec({ ...spec, name: 'change_counters', columns: [{ name: 'scope', type: 'text' }], leftOut: ['version'] });
    expect(counters.columns.map((c) => c.name)).toEqual(['scope']);
  });

  it('is a type error for a column named nowhere, or a name that is no column', () => {
    // @ts-expect-error `version` is neither carried nor left out
    tableSpec({ ...spec, name: 'change_counters', columns: [{ name: 'scope', type: 'text' }] });
    // @ts-expect-error `versions` is no column of change_counters
    tableSpec({ ...spec, name: 'change_counters', columns: [{ name: 'scope', type: 'text' }, { name: 'versions', type: 'int' }], leftOut: ['version'] });
    expect(TABLES.length).toBeGreaterThan(0);
  });
});
