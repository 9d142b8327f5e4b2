import { createHash } from 'node:crypto';
import { AppError } from './errors.js';

/**
 * Entity tags (RFC 9110, section 8.8.3) made from what an answer is built of (the change
 * counters and row versions it shows, the flags that shape it, the deployment), never from the
 * answer itself: computing one costs a hash of a few short strings.
 *
 * A tag is `"<state>"`, or `"<state>-s<window>-<key>"` for an answer with signed media URLs,
 * which change with the signing window and key (wishlists/media-urls.ts). `<state>` names the data; `If-Match`
 * compares it (so the tag of a signed read is as good as the raw read's), `If-None-Match` the
 * whole tag.
 */
export interface Tagger {
  /** The tag of an answer built from `parts` (resource kind, ids, flags, versions). */
  tag(parts: readonly (string | number | boolean)[]): string;
  /**
   * The tag of the same answer with media references signed in `window` under the key `keyId`
   * names (instances without a shared key sign differently).
   */
  signed(tag: string, signing: { window: number; keyId: string }): string;
}

/**
 * The version of how answers are rendered from the data. A release that changes the bytes of
 * any tagged answer for the same data (a field added, an order changed) must increase it, or a
 * client could keep an answer of the old form through a 304. (The package version is in the
 * tags too, but it does not change with every commit.)
 */
export const ANSWER_FORMAT = 1;

/** Characters of the state part: 162 bits of SHA-256 in base64url. */
const STATE_LENGTH = 27;

/**
 * `deployment` names what shapes answers besides the data (the release, URL templates and base
 * URLs): instances configured alike give the same tags; a release or a setting that changes
 * answers changes every tag.
 */
export function createTagger(deployment: readonly string[]): Tagger {
  const salt = createHash('sha256').update([ANSWER_FORMAT, ...deployment].join('\0')).digest('base64url');
  return {
    tag(parts) {
      const state = createHash('sha256').update(salt).update('\0').update(parts.join('\0')).digest('base64url');
      return `"${state.slice(0, STATE_LENGTH)}"`;
    },
    signed(tag, { window, keyId }) {
      return `${tag.slice(0, -1)}-s${window}-${keyId}"`;
    },
  };
}

/** What `If-Match` asked for: any current representation (`*`), or one of these tags. */
export type Precondition = '*' | readonly string[];

/** The state part of a tag (before a signing window), as `If-Match` compares it. */
const SIGNED_TAG = new RegExp(`^("[A-Za-z0-9_-]{${STATE_LENGTH}})-s\\d+-[A-Za-z0-9_-]+"$`);
const statePart = (tag: string): string => {
  const signed = SIGNED_TAG.exec(tag);
  return signed ? `${signed[1]}"` : tag;
};

/**
 * Refuses a write whose `If-Match` names none of the resource's current tags (strong comparison,
 * RFC 9110 13.1.1), with 412 `precondition-failed`; no precondition lets it through. `current`
 * is '' when there is no resource yet: then even `*` fails.
 */
export function requireMatch(precondition: Precondition | undefined, current: string, what: string): void {
  if (precondition === undefined || (precondition === '*' && current !== '')) return;
  const state = statePart(current);
  if (precondition !== '*' && current !== '' && precondition.some((t) => statePart(t) === state)) return;
  throw new AppError(
    'precondition-failed',
    current === ''
      ? `${what} does not exist yet, so no If-Match can hold`
      : `${what} has changed since the version named in If-Match; read it again and reapply the change`,
    current === '' ? {} : { etag: current },
  );
}
