import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** `{"error": {"code", "message"}}`: the body of every error response. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'kebab-case error code', examples: ['not-found'] }),
      message: Type.String({ description: 'what went wrong, for a person' }),
    }),
  },
  { $id: 'ErrorBody', title: 'Error' },
);

export const ErrorRef = Type.Ref('ErrorBody');

/** Responses every authenticated route can give, besides its own. */
export const authErrors = {
  400: ErrorRef,
  401: ErrorRef,
  403: ErrorRef,
};

export const Timestamp = Type.String({
  description: 'ISO 8601, UTC, with milliseconds',
  examples: ['2026-01-31T12:00:00.000Z'],
});

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * A query flag: only the exact string `true` turns it on; anything else, a repeated flag
 * (`?f=true&f=true`, parsed as an array) included, leaves it off rather than being refused.
 */
export const QueryFlag = (description: string) =>
  Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.String())], {
      description: `${description} Only \`true\` turns it on.`,
    }),
  );

/**
 * The longest path id (`/card/{cardId}`, `/wishlists/{wishlistId}`, ...). The router refuses a
 * longer one (400) before anything else runs; it is set to this length (app.ts) so that every
 * id up to it is looked up like any other.
 */
export const MAX_PATH_ID_LENGTH = 128;

/** Path ids are matched against stored ids; a malformed one simply matches nothing (404). */
export const PathId = (description: string) =>
  Type.String({ minLength: 1, maxLength: MAX_PATH_ID_LENGTH, description });

export const StatusOk = Type.Object({ status: Type.Literal('ok') });

/**
 * A union of named schemas told apart by the field `tag`, as one schema (a component `id`): a
 * `oneOf` of references with a `discriminator`, so the validator (app.ts turns Ajv's
 * `discriminator` on) checks the one member the tag picks and answers that member's errors alone.
 * `tag` is checked first against every name, so an unknown one is answered with the list. The
 * document adds the discriminator's `mapping` (http/openapi.ts), which Ajv does not take.
 */
export function TaggedUnion<T>(opts: { id: string; description: string; tag: string; names: readonly string[]; members: readonly TSchema[] }): TUnsafe<T> {
  const { id, description, tag, names, members } = opts;
  return Type.Unsafe<T>({
    $id: id,
    title: id,
    type: 'object',
    description,
    properties: { [tag]: { type: 'string', enum: names } },
    required: [tag],
    oneOf: members.map((member) => Type.Ref(member)),
    discriminator: { propertyName: tag },
  });
}
