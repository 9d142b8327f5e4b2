import { describe, expect, it } from 'vitest';
import { isOn } from '../../src/shared/query-flags.js';

describe('isOn', () => {
  it('is on for the exact string true', () => {
    expect(isOn('true')).toBe(true);
  });

  it.each([
    'TRUE',
    'True',
    'tRUE',
    ' true',
    'true ',
    'true\n',
    '1',
    'yes',
    'on',
    'y',
    't',
    'false',
    '0',
    '',
    'truefalse',
  ])('is off for the string %j', (value) => {
    expect(isOn(value)).toBe(false);
  });

  it.each([[undefined], [null], [true], [1], [['true']], [['true', 'true']], [{ value: 'true' }], [new String('true')]])(
    'is off for the non-string %j',
    (value) => {
      expect(isOn(value)).toBe(false);
    },
  );
});
