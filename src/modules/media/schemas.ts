import { Type } from '@sinclair/typebox';
import { ErrorRef, QueryFlag } from '../../shared/schemas.js';

/** Shapes of the media routes, as the public service answers them. */

const Sha256Hex = Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'SHA-256 of the bytes, hex' });
/** The refusals of a route whose request or answer is bytes. */
export const binaryErrors = { 400: ErrorRef, 403: ErrorRef, 404: ErrorRef, 413: ErrorRef };

/** Upload and media ids in paths: bounded, URL-safe. */
export const MediaIdParam = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' });

export const UploadUrlQuery = Type.Object({
  sha256: Type.Optional(Sha256Hex),
  filename: Type.Optional(Type.String({ maxLength: 1024 })),
});

export const UploadUrlAnswer = Type.Object({
  upload: Type.Object({
    uploadId: Type.String(),
    uploadUrl: Type.Union([Type.String(), Type.Null()], {
      description: 'Where to PUT the bytes; null when the caller uploaded audio with the declared SHA-256 before.',
    }),
  }),
});

export const UploadParams = Type.Object({ uploadId: MediaIdParam });

export const SignedQuery = Type.Object({
  expires: Type.Optional(Type.String({ maxLength: 20 })),
  signature: Type.Optional(Type.String({ maxLength: 100 })),
});

export const PutAnswer = Type.Object({
  upload: Type.Object({ uploadId: Type.String(), sha256: Type.String(), size: Type.Integer() }),
});

export const TranscodedQuery = Type.Object({ loudnorm: QueryFlag('Asks for the loudness-normalised (EBU R128) transcode.') });

const TranscodedInfo = Type.Object(
  {
    duration: Type.Number({ description: 'seconds' }),
    fileSize: Type.Integer({ description: 'bytes of the transcoded file' }),
    channels: Type.Integer(),
    format: Type.String({ examples: ['aac'] }),
    sampleRate: Type.Integer(),
    bitrate: Type.Integer({ description: 'kbit/s' }),
    metadata: Type.Record(Type.String(), Type.String(), { description: "the source's tags" }),
  },
  { additionalProperties: true },
);

export const TranscodedAnswer = Type.Object({
  transcode: Type.Union([
    Type.Object({
      uploadId: Type.String(),
      transcodedSha256: Type.String(),
      transcodedInfo: TranscodedInfo,
      transcodedAt: Type.String(),
    }),
    Type.Object({
      uploadId: Type.String(),
      progress: Type.Object({
        phase: Type.Union([Type.Literal('awaiting-upload'), Type.Literal('queued'), Type.Literal('transcoding')]),
        percent: Type.Integer({ minimum: 0, maximum: 100 }),
      }),
    }),
  ]),
});

export const FileParams = Type.Object({ hash: Type.String({ minLength: 1, maxLength: 256 }) });

/** `true`/`false` switches that are on unless `false` is sent (the public service converts by default). */
const OnUnlessFalse = (description: string) =>
  Type.Optional(Type.String({ maxLength: 10, description: `${description} On unless \`false\`.` }));

export const CoverQuery = Type.Object({
  autoconvert: OnUnlessFalse('Resizes (cropping to the centre) and re-encodes the image for its coverType.'),
  coverType: Type.Optional(
    Type.Union(
      ['default', 'activities', 'music', 'myo', 'podcast', 'radio', 'sfx', 'stories'].map((c) => Type.Literal(c)),
    ),
  ),
  filename: Type.Optional(Type.String({ maxLength: 1024 })),
  imageUrl: Type.Optional(Type.String({ maxLength: 2048 })),
});

export const CoverAnswer = Type.Object({
  coverImage: Type.Object({ mediaId: Type.String(), mediaUrl: Type.String() }),
});

const DisplayIcon = Type.Object({
  displayIconId: Type.String(),
  mediaId: Type.String({ description: 'use it as `yoto:#<mediaId>` in `display.icon16x16`' }),
  userId: Type.String(),
  createdAt: Type.String(),
  url: Type.String(),
  public: Type.Boolean(),
  title: Type.Optional(Type.String({ description: "a public icon's title; one's own icon's, from the `filename` it was uploaded with" })),
  publicTags: Type.Optional(Type.Array(Type.String())),
  new: Type.Optional(Type.Boolean()),
});

export const DisplayIconList = Type.Object({ displayIcons: Type.Array(DisplayIcon) });
export const DisplayIconAnswer = Type.Object({ displayIcon: DisplayIcon });

/** `POST /icons` (yoto-js's `icons.upload(file, name)`): the image inside JSON. */
export const IconJsonUpload = Type.Object(
  {
    file: Type.Union([
      Type.String({ description: 'the image, base64 (a `data:` URL too)' }),
      Type.Object(
        { type: Type.Literal('Buffer'), data: Type.Array(Type.Integer({ minimum: 0, maximum: 255 })) },
        { additionalProperties: false, description: "a Node Buffer as `JSON.stringify` writes it (what yoto-js sends); a Blob is written `{}` and refused" },
      ),
    ]),
    name: Type.String({ maxLength: 1024, description: "titles the icon, as the upload's `filename` does" }),
  },
  { additionalProperties: false, title: 'IconJsonUpload' },
);

/** yoto-js's `UploadIconResponse` (`id`, `url`), with the icon as the documented upload answers it. */
export const IconJsonAnswer = Type.Object({
  id: Type.String({ description: "the icon's `displayIconId`" }),
  url: Type.String(),
  displayIcon: DisplayIcon,
});

export const IconUploadQuery = Type.Object({
  autoConvert: OnUnlessFalse('Resizes the image to 16x16 and converts it to PNG; off, it must already be a 16x16 PNG or GIF.'),
  filename: Type.Optional(
    Type.String({
      maxLength: 1024,
      description: "Titles the icon: the name without folders or extension, at most 200 characters. Sent again with the same image, it retitles the icon.",
    }),
  ),
});

export const PublicIconQuery = Type.Object({
  title: Type.Optional(Type.String({ maxLength: 200 })),
  tags: Type.Optional(Type.String({ maxLength: 2000, description: 'comma-separated' })),
});

export const FamilyImageAnswer = Type.Object({ imageId: Type.String(), url: Type.String() });
export const FamilyImageList = Type.Object({
  images: Type.Array(
    Type.Object({ eTag: Type.String(), imageId: Type.String(), lastModified: Type.String(), size: Type.Integer() }),
  ),
});
export const FamilyImageListQuery = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: 'at most this many images' })),
});
export const FamilyImageQuery = Type.Object({
  width: Type.Optional(Type.String({ maxLength: 6 })),
  height: Type.Optional(Type.String({ maxLength: 6 })),
});
