import fc from 'fast-check';
import { CATEGORIES } from '../../src/modules/cards/schemas.js';

/**
 * fast-check generators of the documents clients of the public service send and read back:
 * cards as its own examples show them (nulls where it returns nulls, `yoto:#` and `service:#`
 * references, http(s) URLs on any track, a numeric `content.version`, fields the interface does
 * not describe), groups and wishlist content. Everything generated is valid: the round-trip
 * law is about what a read returns, and a read only returns what was accepted.
 */

/** Text that can be stored as sent: no U+0000 (docs/api.md, "Requests and errors"). */
export const text = (maxLength = 12): fc.Arbitrary<string> =>
  fc.string({ unit: 'grapheme', maxLength }).filter((s) => !s.includes('\u0000'));

const nonEmpty = (maxLength: number): fc.Arbitrary<string> =>
  text(maxLength).filter((s) => s.length > 0);

const number = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));

/**
 * Any JSON value a client may send: fast-check also makes objects with a `__proto__` or
 * `constructor` member, which the server refuses as prototype poisoning (400, src/http/json-body.ts),
 * so no read ever returns them.
 */
const POISON = /"(__proto__|constructor)":/;
const jsonValue = (maxDepth: number): fc.Arbitrary<fc.JsonValue> =>
  fc.jsonValue({ maxDepth }).filter((v) => !POISON.test(JSON.stringify(v)));

/** Undescribed fields, kept as sent; the `x` keeps their names off the described ones. */
const extras = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 6 }).map((k) => `x${k}`),
  jsonValue(2),
  { maxKeys: 2 },
);

export const mediaRef = fc
  .tuple(fc.constantFrom('service:#', 'yoto:#'), fc.stringMatching(/^[A-Za-z0-9_-]{1,16}$/))
  .map(([prefix, hash]) => `${prefix}${hash}`);

const url = fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true });

const display = fc.oneof(
  fc.constant(null),
  fc.record({ icon16x16: fc.oneof(mediaRef, fc.constant(null)) }, { requiredKeys: [] }),
);

const track = fc
  .tuple(
    fc.record(
      {
        key: text(4),
        title: text(),
        trackUrl: fc.oneof(mediaRef, url),
        type: fc.constantFrom('audio', 'stream'),
        format: fc.constantFrom('aac', 'mpeg', 'opus'),
        display,
        ambient: fc.constant(null),
        duration: fc.nat(),
        fileSize: fc.nat(),
      },
      { requiredKeys: ['key', 'trackUrl', 'type'] },
    ),
    extras,
  )
  .map(([described, more]) => ({ ...more, ...described }));

const chapter = fc.record(
  {
    key: text(4),
    title: text(),
    overlayLabel: text(3),
    overlayLabelOverride: fc.oneof(text(3), fc.constant(null)),
    display,
    ambient: fc.constant(null),
    defaultTrackAmbient: fc.constant(null),
    defaultTrackDisplay: fc.constant(null),
    tracks: fc.array(track, { maxLength: 3 }),
  },
  { requiredKeys: ['key', 'tracks'] },
);

const content = fc.record(
  {
    activity: fc.constantFrom('yoto_Player', 'service_Player'),
    chapters: fc.array(chapter, { maxLength: 3 }),
    config: fc.record(
      {
        autoadvance: text(),
        onlineOnly: fc.boolean(),
        shuffle: fc.array(fc.record({ start: number, end: number, limit: number }, { requiredKeys: [] }), { maxLength: 2 }),
        trackNumberOverlayTimeout: number,
        disableAutoOverlayLabels: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
    cover: fc.constant({}),
    editSettings: fc.record(
      {
        autoOverlayLabels: text(),
        editKeys: fc.boolean(),
        podcastTrackDisplay: fc.record({ icon16x16: fc.oneof(mediaRef, fc.constant(null)) }),
        podcastType: text(),
      },
      { requiredKeys: [] },
    ),
    hidden: fc.boolean(),
    restricted: fc.boolean(),
    version: fc.oneof(text(3), fc.integer({ min: 0, max: 1000 }), number),
  },
  { requiredKeys: [] },
);

const metadata = fc.record(
  {
    author: text(),
    category: fc.constantFrom(...CATEGORIES),
    cover: fc.constant({}),
    description: fc.oneof(text(40), fc.constant(null)),
    feedUrl: fc.oneof(fc.constant(null), url),
    hidden: fc.boolean(),
    languages: fc.array(text(5), { maxLength: 3 }),
    list: fc.array(jsonValue(1), { maxLength: 2 }),
    media: fc.record({ duration: fc.nat(), fileSize: fc.nat(), hasStreams: fc.boolean() }, { requiredKeys: [] }),
    note: text(),
    order: fc.oneof(fc.nat().map(String), fc.constant(null)),
    previewAudio: text(),
    share: fc.boolean(),
    status: fc.record({ name: fc.constantFrom('inprogress', 'complete'), updatedAt: text() }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);

/** A title of 1 to 100 characters (code points), as the interface allows. */
const title = nonEmpty(30).filter((s) => Array.from(s).length <= 100);

/** A MYO card as a client writes it with `POST /content` (no `cardId`). */
export const cardDocument: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc.record(
      {
        title,
        content,
        metadata,
        availability: fc.constantFrom('free', 'premium', ''),
        clubAvailability: fc.array(fc.record({ store: fc.constantFrom('us', 'gb') }), { maxLength: 2 }),
        sharing: fc.record(
          { linkCreatedAt: text(), linkUrl: url, shareCount: fc.nat(), shareLimit: fc.nat() },
          { requiredKeys: [] },
        ),
        shareLinkUrl: url,
      },
      { requiredKeys: ['title'] },
    ),
    extras,
  )
  .map(([described, more]) => ({ ...more, ...described }));

/** A group body: a name that is not blank, an image id, items drawn from `cardIds`. */
export const groupBody = (cardIds: readonly string[]): fc.Arbitrary<Record<string, unknown>> =>
  fc.record({
    name: nonEmpty(120).filter((s) => s.trim() !== ''),
    imageId: fc.oneof(fc.constantFrom('fp-cards', 'fp-star'), nonEmpty(20)),
    items: fc.array(fc.constantFrom(...cardIds).map((contentId) => ({ contentId })), { maxLength: 8 }),
  });

/** Wishlist content: elements with an `item` and whatever else clients keep there. */
export const wishlistContent: fc.Arbitrary<Record<string, unknown>[]> = fc.array(
  fc
    .tuple(
      fc.record(
        { item: nonEmpty(10), icon: fc.oneof(mediaRef, fc.constant(null)), cover: url, count: number },
        { requiredKeys: ['item'] },
      ),
      extras,
    )
    .map(([described, more]) => ({ ...more, ...described })),
  { maxLength: 5 },
);

/** `value` as it comes back through JSON (-0 becomes 0, undefined members go). */
export const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
