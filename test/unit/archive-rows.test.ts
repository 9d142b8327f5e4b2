import { describe, expect, it } from 'vitest';
import { ARCHIVE_VERSION, BadRow, TABLES, decodeRow } from '../../src/transfer/archive-format.js';

/**
 * A row of an archive is read by the columns of that archive's version (archive-format.ts):
 * `family_devices` gained its players' settings in version 2; a version-1 row has none of them,
 * and they are null; a row of either version with the other's columns is a bad record.
 */
const devices = TABLES.find((t) => t.name === 'family_devices')!;
const v1 = { device_id: 'd1', family_id: 'f1', added_at: '2026-01-01T00:00:00.000Z', position: 0 };
const v2 = { ...v1, name: 'Kitchen', device_type: 'cardshelf-browser', config: '{"maxVolumeLimit":"12"}', shortcuts: null, registered_by: 'u1' };

describe('archive rows by format version', () => {
  it('a version-1 player row takes null for the columns added since', () => {
    expect(decodeRow(devices, JSON.stringify(v1), 1)).toEqual({ ...v1, name: null, device_type: null, config: null, shortcuts: null, registered_by: null });
  });

  it('a current row is read as it is', () => {
    expect(ARCHIVE_VERSION).toBe(4);
    expect(decodeRow(devices, JSON.stringify(v2))).toEqual(v2);
  });

  it("a row with the other version's columns is a bad record; a credential column is never one of them", () => {
    expect(() => decodeRow(devices, JSON.stringify(v1), 2)).toThrow(BadRow);
    expect(() => decodeRow(devices, JSON.stringify(v2), 1)).toThrow(BadRow);
    expect(() => decodeRow(devices, JSON.stringify({ ...v2, credential_id: 'jti' }))).toThrow(/columns are \[.*credential_id\]/);
    expect(() => decodeRow(devices, JSON.stringify({ ...v2, config: 'not json' }))).toThrow(/config is not JSON/);
  });
});
