/**
 * A leading track number as file names carry it: up to 3 digits (so a year, "2001 A Space
 * Odyssey", stays), after an optional disc number ("1-01"), then separators ("-", ".", ")", ":")
 * or a space, and something after it ("01.mp3" keeps its "01": the number is all its name).
 */
const TRACK_NUMBER = /^(?:\d{1,2}[-.])?\d{1,3}(?:\s*[-–—.):]+\s*|\s+)(?=\S)/u;

/**
 * A track's title from its file's name: the extension, a leading track number and its separators
 * removed, underscores read as spaces ("01 - Intro.mp3" -> "Intro", "02_The_Bear.m4a" -> "The Bear").
 */
export function titleFromFileName(name: string): string {
  const base = name.replace(/\.[^.]+$/, '');
  const spaced = base.replace(/_+/g, ' ').replace(/\s+/g, ' ').trim();
  return spaced.replace(TRACK_NUMBER, '').trim() || spaced || base;
}
