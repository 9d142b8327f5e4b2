import { useEffect } from 'preact/hooks';
import type { components } from './api-types.js';
import { liveOpen } from './events.js';

/** What the Linked services page and a card's "Send to" buttons share (docs/api.md, "Linked services"). */

export type LinkView = components['schemas']['Link'];
export type LinkJob = components['schemas']['LinkJob'];

/** A job that will change no more. */
export const finished = (job: Pick<LinkJob, 'state'>): boolean => job.state === 'done' || job.state === 'failed';

/** The remote card ids a person typed: separated by commas, spaces or lines, each once. */
export const cardIdsOf = (text: string): string[] => [...new Set(text.split(/[\s,]+/).filter(Boolean))];

/** Where a link's sign-in is finished: the address with the code in it when the remote gives one. */
export const signInAddress = (link: LinkView): string | undefined => link.verificationUriComplete ?? link.verificationUri;

/** How often a page reads again what it waits for while the live events are not flowing. */
const POLL_MS = 4_000;

/**
 * While `waiting` (a sign-in or a copy under way), calls `reread` every few seconds when the event
 * stream is not open: live events are the way changes arrive, this is the fallback.
 */
export function usePollWhileWaiting(waiting: boolean, reread: () => unknown): void {
  useEffect(() => {
    if (!waiting) return;
    const timer = setInterval(() => {
      if (!liveOpen()) void reread();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [waiting]);
}
