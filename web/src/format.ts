// Dates, durations and sizes through Intl, in the browser's language.

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const sizeUnits = ['byte', 'kilobyte', 'megabyte', 'gigabyte'] as const;
// Bytes in words ("0 bytes", "1 byte": the plural rules are Intl's); larger units short (kB, MB), as file managers write them.
const sizeFormats = sizeUnits.map(
  (unit) => new Intl.NumberFormat(undefined, { style: 'unit', unit, unitDisplay: unit === 'byte' ? 'long' : 'short', maximumFractionDigits: 1 }),
);
const countFormat = new Intl.NumberFormat(undefined);
const pluralRules = new Intl.PluralRules(undefined);
const durationParts = {
  hour: new Intl.NumberFormat(undefined, { style: 'unit', unit: 'hour', unitDisplay: 'narrow' }),
  minute: new Intl.NumberFormat(undefined, { style: 'unit', unit: 'minute', unitDisplay: 'narrow' }),
  second: new Intl.NumberFormat(undefined, { style: 'unit', unit: 'second', unitDisplay: 'narrow' }),
};
const list = new Intl.ListFormat(undefined, { style: 'narrow', type: 'unit' });

export const formatDate = (iso: string): string => dateFormat.format(new Date(iso));
const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
/** A date with its time: when a copy started, until when a code works. */
export const formatTime = (iso: string): string => timeFormat.format(new Date(iso));

/** The words for a count in each plural category the language has; `other` is required, as every language has it. */
export type PluralWords = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };

/**
 * A count with its noun in the right plural form for the browser's language: `#` in the words is
 * the count, formatted (1,234). countOf(1, { one: '# card', other: '# cards' }) is "1 card".
 */
export function countOf(count: number, words: PluralWords): string {
  const form = words[pluralRules.select(count)] ?? words.other;
  return form.replace('#', countFormat.format(count));
}

/** 1.5 MB, 320 kB, 12 bytes: decimal units, as file managers show them. */
export function formatSize(bytes: number): string {
  let unit = 0;
  let value = bytes;
  while (value >= 1000 && unit < sizeUnits.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return sizeFormats[unit]!.format(value);
}

/** 1h 2m 3s; whole seconds. */
export function formatDuration(seconds: number): string {
  const total = Math.max(0, Math.round(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const parts: string[] = [];
  if (h) parts.push(durationParts.hour.format(h));
  if (h || m) parts.push(durationParts.minute.format(m));
  parts.push(durationParts.second.format(s));
  return list.format(parts);
}

/** "file 2.mp3" before "file 10.mp3": names compared as people read numbers. */
export const naturalOrder = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' }).compare;
