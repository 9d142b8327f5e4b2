import type { components } from './api-types.js';

/** What the Linked services page and a card's "Send to" buttons share (docs/api.md, "Linked services"); no browser needed (test/unit). */

export type LinkView = components['schemas']['Link'];
export type LinkJob = components['schemas']['LinkJob'];

/** A job that will change no more. */
export const finished = (job: Pick<LinkJob, 'state'>): boolean => job.state === 'done' || job.state === 'failed';

/** The remote card ids a person typed: separated by commas, spaces or lines, each once. */
export const cardIdsOf = (text: string): string[] => [...new Set(text.split(/[\s,]+/).filter(Boolean))];

/** Where a link's sign-in is finished: the address with the code in it when the remote gives one. */
export const signInAddress = (link: LinkView): string | undefined => link.verificationUriComplete ?? link.verificationUri;
