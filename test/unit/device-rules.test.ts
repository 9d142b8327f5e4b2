import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, ONLINE_WINDOW_MS, configOf, isOnline, normalReport } from '../../src/modules/devices/rules.js';

describe('isOnline', () => {
  const at = '2026-11-24T12:00:00.000Z';
  const t0 = Date.parse(at);
  it.each([
    ['never reported', null, t0, false],
    ['reported just now', at, t0, true],
    ['reported at the edge of the window', at, t0 + ONLINE_WINDOW_MS, true],
    ['reported a millisecond too long ago', at, t0 + ONLINE_WINDOW_MS + 1, false],
  ])('%s', (_what, statusAt, nowMs, online) => {
    expect(isOnline(statusAt, nowMs)).toBe(online);
  });
});

describe('configOf', () => {
  it('is the defaults for a device that never wrote its settings', () => {
    expect(configOf(null)).toEqual(DEFAULT_CONFIG);
  });
  it('keeps stored settings under an update, and the defaults under both', () => {
    const stored = JSON.stringify({ maxVolumeLimit: '8', repeatAll: true });
    expect(configOf(stored, { repeatAll: false, dayTime: '06:30' })).toEqual({ ...DEFAULT_CONFIG, maxVolumeLimit: '8', repeatAll: false, dayTime: '06:30' });
  });
});

describe('normalReport', () => {
  it("names no card 'none', as the public service does", () => {
    expect(normalReport({ activeCard: null }).activeCard).toBe('none');
    expect(normalReport({}).activeCard).toBe('none');
    expect(normalReport({ activeCard: 'abcde' }).activeCard).toBe('abcde');
  });
});
