import { createHash, hash as digest } from 'node:crypto';
import { AppError } from './errors.js';
import type { RawJson } from './raw-json.js';

/**
 * Entity tags (RFC 9110, section 8.8.3) made from what an answer is built of (the change
 * counters and row versions it shows, the flags that shape it, the deployment), never from the
 * answer itself: computing one costs a hash of a few short strings.
 *
 * A tag is `"<state>"`, then optional parts after dots: `.<shown>` names other data the answer
 * shows (a group's answer shows the cards of its items), `.s<window>-<key>.<reader>` the signing
 * window, key and reader of an answer with signed media URLs (media/media-urls.ts; which
 * references are signed depends on who reads, media/read-rights.ts). `If-None-Match`
 * compares whole tags: any change of the answer is a new tag. `If-Match` compares `<state>`
 * alone, the resource that the write replaces: a write is refused when the resource changed,
 * not when something it only shows did (a card of a group's item), nor for a read that was signed.
 */
export interface Tagger {
  /**
   * The tag of an answer made of the resource `parts` name (kind, ids, flags, versions) and of
   * the other data `shown` names (counters of what it shows besides).
   */
  tag(parts: readonly TagPart[], shown?: readonly TagPart[]): string;
  /**
   * The tag of the same answer with media references signed for `reader` (a user id) in
   * `window` under the key `keyId` names (instances without a shared key sign differently).
   */
  signed(tag: string, signing: { window: number; keyId: string; reader: string }): string;
}

type TagPart = string | number | boolean;

/**
 * The version of how answers are rendered from the data. A release that changes the bytes of
 * any tagged answer for the same data (a field added, an order changed) must increase it, or a
 * client could keep an answer of the old form through a 304. (The package version is in the
 * tags too, but it does not change with every commit.)
 */
export const ANSWER_FORMAT = 1;

/** Characters of the state part: 162 bits of SHA-256 in base64url (which has no dot). */
const STATE_LENGTH = 27;

/**
 * `deployment` names what shapes answers besides the data (the release, URL templates and base
 * URLs): instances configured alike give the same tags; a release or a setting that changes
 * answers changes every tag.
 */
export function createTagger(deployment: readonly string[]): Tagger {
  const salt = createHash('sha256').update([ANSWER_FORMAT, ...deployment].join('\0')).digest('base64url');
  // The one-shot `crypto.hash` (Node 20.12): half the time of a Hash object and its updates.
  const hash = (parts: readonly TagPart[], length: number): string =>
    digest('sha256', `${salt}\0${parts.join('\0')}`, 'base64url').slice(0, length);
  return {
    tag(parts, shown) {
      const state = hash(parts, STATE_LENGTH);
      return shown === undefined ? `"${state}"` : `"${state}.${hash(shown, 16)}"`;
    },
    signed(tag, { window, keyId, reader }) {
      return `${tag.slice(0, -1)}.s${window}-${keyId}.${hash([reader], 11)}"`;
    },
  };
}

/**
 * A read whose tag is known and whose answer is made on demand: what the read found to make
 * the tag (the caller's family, the row) serves the answer too, instead of being read again.
 */
export interface TaggedRead {
  tag: string;
  render: () => Promise<RawJson> | RawJson;
}

/** What `If-Match` asked for: any current representation (`*`), or one of these tags. */
export type Precondition = '*' | readonly string[];

const OUR_TAG = new RegExp(`^"([A-Za-z0-9_-]{${STATE_LENGTH}})(\\.[A-Za-z0-9_.-]+)?"$`);
/** The state part of a tag, as `If-Match` compares it; a tag not of our making is taken whole. */
const statePart = (tag: string): string => {
  const ours = OUR_TAG.exec(tag);
  return ours ? `"${ours[1]}"` : tag;
};

/**
 * Refuses a write whose `If-Match` names none of the resource's current tags (strong comparison
 * of the state part, RFC 9110 13.1.1), with 412 `precondition-failed`; no precondition lets it
 * through. `current` is '' when there is no resource yet: then even `*` fails.
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
