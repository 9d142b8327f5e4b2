import { describe, expect, it } from 'vitest';
import { jobProgressBar, jobProgressLine } from '../../src/modules/links/job-text.js';
import type { Job } from '../../src/modules/links/schemas.js';
import { formatBytes, textTable } from '../../src/shared/terminal-text.js';

const job = (change: Partial<Job>): Job => ({
  jobId: 'job1',
  linkId: 'link1',
  kind: 'pull',
  state: 'running',
  cards: [
    { remoteCardId: 'a', cardId: 'x', state: 'copied' },
    { remoteCardId: 'b', cardId: null, state: 'pending' },
  ],
  files: { done: 3, total: 12 },
  bytes: 3_456_789,
  createdAt: '2025-01-01T00:00:00.000Z',
  updatedAt: '2025-01-01T00:00:00.000Z',
  ...change,
});

describe('a job as text (cardshelf link pull|push)', () => {
  it('one line of state and counts', () => {
    expect(jobProgressLine(job({}))).toBe('pull job1: running, 3/12 files, 3.5 MB, 1/2 cards');
  });

  it.each([
    [job({}), '[######------------------]'],
    [job({ files: { done: 0, total: 0 } }), '[------------------------]'],
    [job({ files: { done: 12, total: 12 } }), '[########################]'],
    // Done with nothing to copy: full.
    [job({ state: 'done', files: { done: 0, total: 0 } }), '[########################]'],
  ])('a bar of the files copied', (state, bar) => {
    expect(jobProgressBar(state, 200)).toBe(`${bar} ${jobProgressLine(state)}`);
  });

  // The line below is 76 characters: whole from 77 columns on.
  it.each([20, 40, 60, 76])('never reaches the last column of a %i-column terminal (a wrapped line cannot be rewritten)', (columns) => {
    const line = jobProgressBar(job({}), columns);
    expect(line.length).toBe(columns - 1);
    expect(line.endsWith('…')).toBe(true);
    expect(jobProgressBar(job({}), 77)).toBe(`[######------------------] ${jobProgressLine(job({}))}`);
  });

  it.each([
    [0, '0 byte'],
    [999, '999 byte'],
    [1000, '1 kB'],
    [3_456_789, '3.5 MB'],
    [7_200_000_000, '7.2 GB'],
  ])('%i bytes are %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  it('a table pads each column to its widest cell', () => {
    expect(textTable([['A', 'BB', 'C'], ['long', 'x', 'last cell']])).toBe('A     BB  C\nlong  x   last cell');
  });
});
