import { Type } from '@sinclair/typebox';
import { QueryFlag } from '../../shared/schemas.js';

/** Shapes of the media routes, as the public service answers them. */

const Sha256Hex = Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'SHA-256 of the bytes, hex' });
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
      description: 'Where to PUT the bytes; null when audio with the declared SHA-256 is already stored.',
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
