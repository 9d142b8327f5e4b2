import { formatBytes } from '../../shared/terminal-text.js';
import type { Job } from './schemas.js';

/** A job's progress as text, for the command line (`cardshelf link pull|push`). */

const BAR_WIDTH = 24;

/** Cards with an outcome, of the cards the job has read so far. */
const cardsDone = (job: Job): number => job.cards.filter((c) => c.state !== 'pending').length;

/** One line of the job's state and counts: `pull abc: running, 12/16 files, 3.4 MB, 2/3 cards`. */
export function jobProgressLine(job: Job): string {
  return `${job.kind} ${job.jobId}: ${job.state}, ${job.files.done}/${job.files.total} files, ${formatBytes(job.bytes)}, ${cardsDone(job)}/${job.cards.length} cards`;
}

/**
 * The line a terminal shows and rewrites: a bar of the files copied (their total grows as the
 * job reads the cards), then the counts, cut to the terminal's width so it never wraps (a
 * wrapped line cannot be rewritten in place).
 */
export function jobProgressBar(job: Job, columns: number): string {
  const fraction = job.state === 'done' ? 1 : job.files.total > 0 ? job.files.done / job.files.total : 0;
  const filled = Math.round(fraction * BAR_WIDTH);
  const line = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${jobProgressLine(job)}`;
  return line.length < columns ? line : `${line.slice(0, Math.max(0, columns - 2))}…`;
}
