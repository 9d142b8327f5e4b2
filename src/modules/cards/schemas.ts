import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp } from '../../shared/schemas.js';
import { MEDIA_REF_PATTERN, MEDIA_REF_SOURCE } from './media-ref.js';

/**
 * The card, as the interface describes it. Objects accept fields beyond the ones described
 * (clients of the original service send more than the document shows) and keep them as sent;
 * the described fields must have the described types.
 */

export const CATEGORIES = ['', 'none', 'stories', 'music', 'radio', 'podcast', 'sfx', 'activities', 'alarms'] as const;

/** A media reference, `service:#<hash>` or `yoto:#<hash>` (media-ref.ts). */
export const MediaRef = Type.String({ pattern: MEDIA_REF_PATTERN, examples: ['yoto:#4fKZ3nQ9', 'service:#4fKZ3nQ9'] });
/**
 * Where a track's audio or an icon is (DECISIONS.md, "Cards"): a media reference, or an absolute
 * http(s) URL, whatever the track's type. A `playable=true` read answers signed URLs here.
 */
const MediaLocation = Type.String({
  pattern: `^(?:${MEDIA_REF_SOURCE}|https?://[^\\s]+)$`,
  description: '`yoto:#<hash>` or `service:#<hash>`, or an absolute http(s) URL',
});
const TrackUrl = MediaLocation;

/**
 * A chapter's or track's `display`. The public service returns `"display": null` and
 * `"icon16x16": null` in its own examples, so both are accepted as `null` and stored as sent.
 */
const Display = Nullable(Type.Object({ icon16x16: Type.Optional(Nullable(MediaLocation)) }));

export const Track = Type.Object({
  key: Type.String(),
  title: Type.Optional(Type.String()),
  trackUrl: TrackUrl,
  type: Type.Union([Type.Literal('audio'), Type.Literal('stream')]),
  format: Type.Optional(Type.String({ examples: ['aac'] })),
  display: Type.Optional(Display),
  ambient: Type.Optional(Type.Unknown()),
  duration: Type.Optional(Type.Number()),
  fileSize: Type.Optional(Type.Number()),
});

export const Chapter = Type.Object({
  key: Type.String({ examples: ['01'] }),
  title: Type.Optional(Type.String()),
  overlayLabel: Type.Optional(Type.String()),
  overlayLabelOverride: Type.Optional(Nullable(Type.String())),
  display: Type.Optional(Display),
  ambient: Type.Optional(Type.Unknown()),
  defaultTrackAmbient: Type.Optional(Type.Unknown()),
  defaultTrackDisplay: Type.Optional(Type.Unknown()),
  tracks: Type.Array(Track),
});

const Shuffle = Type.Object({
  start: Type.Optional(Type.Number()),
  end: Type.Optional(Type.Number()),
  limit: Type.Optional(Type.Number()),
});

export const Content = Type.Object({
  activity: Type.Optional(Type.String({ examples: ['service_Player'] })),
  chapters: Type.Optional(Type.Array(Chapter)),
  config: Type.Optional(
    Type.Object({
      autoadvance: Type.Optional(Type.String()),
      onlineOnly: Type.Optional(Type.Boolean()),
      shuffle: Type.Optional(Type.Array(Shuffle)),
      trackNumberOverlayTimeout: Type.Optional(Type.Number()),
      disableAutoOverlayLabels: Type.Optional(Type.Boolean()),
    }),
  ),
  cover: Type.Optional(Type.Object({})),
  editSettings: Type.Optional(
    Type.Object({
      autoOverlayLabels: Type.Optional(Type.String()),
      editKeys: Type.Optional(Type.Boolean()),
      podcastTrackDisplay: Type.Optional(Type.Object({ icon16x16: Type.Optional(Nullable(Type.String())) })),
      podcastType: Type.Optional(Type.String()),
    }),
  ),
  hidden: Type.Optional(Type.Boolean()),
  restricted: Type.Optional(Type.Boolean()),
  /** A string in the interface's samples, a number in the public service's create example. */
  version: Type.Optional(Type.Union([Type.String(), Type.Number()])),
});

export const Metadata = Type.Object({
  author: Type.Optional(Type.String()),
  category: Type.Optional(Type.Union(CATEGORIES.map((c) => Type.Literal(c)))),
  cover: Type.Optional(Type.Object({})),
  description: Type.Optional(Nullable(Type.String())),
  feedUrl: Type.Optional(Type.Unknown()),
  hidden: Type.Optional(Type.Boolean()),
  languages: Type.Optional(Type.Array(Type.String())),
  list: Type.Optional(Type.Array(Type.Unknown())),
  media: Type.Optional(
    Type.Object({
      duration: Type.Optional(Type.Number()),
      fileSize: Type.Optional(Type.Number()),
      hasStreams: Type.Optional(Type.Boolean()),
    }),
  ),
  note: Type.Optional(Type.String()),
  order: Type.Optional(Nullable(Type.String())),
  previewAudio: Type.Optional(Type.String()),
  share: Type.Optional(Type.Boolean()),
  status: Type.Optional(
    Type.Object({ name: Type.Optional(Type.String()), updatedAt: Type.Optional(Type.String()) }),
  ),
});

/** Fields every writer of a card may set. */
const writableFields = {
  title: Type.String({ minLength: 1, maxLength: 100 }),
  content: Type.Optional(Content),
  metadata: Type.Optional(Metadata),
  availability: Type.Optional(Type.String({ examples: ['free', 'premium'] })),
  clubAvailability: Type.Optional(Type.Array(Type.Object({ store: Type.String() }))),
  sharing: Type.Optional(
    Type.Object({
      linkCreatedAt: Type.Optional(Type.String()),
      linkUrl: Type.Optional(Type.String()),
      shareCount: Type.Optional(Type.Number()),
      shareLimit: Type.Optional(Type.Number()),
    }),
  ),
  shareLinkCreatedAt: Type.Optional(Type.String()),
  shareLinkUrl: Type.Optional(Type.String()),
};

/**
 * `POST /content`. Without `cardId` it creates a card (then `title` is required); with the id of
 * one of the caller's cards it updates the top-level fields sent. The fields the server
 * generates may be sent back as they were read, of any value: they are ignored.
 */
export const CardInput = Type.Object(
  {
    cardId: Type.Optional(Nullable(Type.String({ maxLength: 128 }))),
    ...writableFields,
    title: Type.Optional(writableFields.title),
    createdAt: Type.Optional(Type.Unknown()),
    updatedAt: Type.Optional(Type.Unknown()),
    userId: Type.Optional(Type.Unknown()),
    slug: Type.Optional(Type.Unknown()),
    sortkey: Type.Optional(Type.Unknown()),
    deleted: Type.Optional(Type.Unknown()),
  },
  { title: 'CardInput' },
);
export type CardInput = Static<typeof CardInput>;

/** `PUT /admin/cards/{cardId}`: a catalogue card with every field, the owner's included. */
export const AdminCardInput = Type.Object(
  {
    ...writableFields,
    userId: Type.String({ minLength: 1, maxLength: 256 }),
    deleted: Type.Optional(Type.Boolean()),
    createdAt: Type.Optional(Timestamp),
    cardId: Type.Optional(Type.Unknown({ description: 'ignored: the path names the card' })),
    updatedAt: Type.Optional(Type.Unknown()),
    slug: Type.Optional(Type.Unknown()),
    sortkey: Type.Optional(Type.Unknown()),
  },
  { title: 'AdminCardInput' },
);
export type AdminCardInput = Static<typeof AdminCardInput>;

const generatedFields = {
  cardId: Type.String({ pattern: '^[A-Za-z0-9]{5}$' }),
  userId: Type.String({ description: 'owner' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  slug: Type.String(),
  sortkey: Type.String(),
  deleted: Type.Boolean(),
};

/** The full card, with chapters. */
export const Card = Type.Object({ ...writableFields, ...generatedFields }, { $id: 'Card', title: 'Card' });
/** The list form: the card without `content.chapters`. */
export const CardSummary = Type.Object(
  { ...writableFields, ...generatedFields, content: Type.Optional(Type.Omit(Content, ['chapters'])) },
  { $id: 'CardSummary', title: 'CardSummary' },
);

export type CardDoc = Record<string, unknown> & {
  cardId: string;
  userId: string;
  title: string;
  content: Record<string, unknown>;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  slug: string;
  sortkey: string;
  deleted: boolean;
};

export const CardEnvelope = Type.Object({ card: Type.Ref('Card') });
export const CardList = Type.Object({ cards: Type.Array(Type.Ref('CardSummary')) });
