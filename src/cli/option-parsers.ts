import { InvalidArgumentError } from 'commander';
import { DURATION_PATTERN } from '../auth/local-issuer.js';

/** A whole number >= 1 (underscores allowed: 1_000_000), for option parsers. */
export function positiveInt(text: string): number {
  const n = /^\d[\d_]*$/.test(text) ? Number(text.replaceAll('_', '')) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('A whole number from 1 up is expected.');
  return n;
}

/** A family id as `PUT /admin/families/{familyId}` takes them. */
export function familyId(text: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(text)) throw new InvalidArgumentError('A family id is 1 to 64 characters of [A-Za-z0-9_-].');
  return text;
}

export function duration(text: string): string {
  if (!DURATION_PATTERN.test(text)) throw new InvalidArgumentError('A duration such as 30s, 15m, 2h or 7d is expected.');
  return text;
}

/** A duration (`30s`, `15m`, `2h`, `7d`) in milliseconds, for option parsers. */
export function durationMs(text: string): number {
  const match = /^(\d+)(s|m|h|d)$/.exec(text);
  if (!match) throw new InvalidArgumentError('A duration such as 30m, 12h or 7d is expected.');
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}
