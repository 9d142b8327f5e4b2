import swagger, { type FastifyDynamicSwaggerOptions, type SwaggerTransformObject } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { Config } from '../config.js';
import type { ErrorCode } from '../shared/errors.js';
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { ErrorRef } from '../shared/schemas.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency.js';

/**
 * The OpenAPI document is the contract, and the routes are its one source: each route declares
 * who may call it (`config.auth`: a scope, `null` for any valid token, absent for public) and
 * its own answers; `describeRoute` (an onRoute hook) derives from that its security, its
 * 401/403 answers, the scope text and the answers every route of its kind can give, and
 * `finishDocument` turns error answers into the shared responses below. Route schemas stay the
 * ones that serialise and validate, so the document cannot say what the code does not do.
 */

export const TAGS = [
  { name: 'cards', description: 'MYO ("make your own") cards: the caller\'s own, and any card the caller may read.' },
  { name: 'family', description: "The caller's family: its members and players (devices)." },
  { name: 'library', description: 'The family library: free and club cards added to it, in the order they were added.' },
  { name: 'groups', description: 'Named groups arranging the cards of the family library.' },
  { name: 'wishlists', description: 'Wishlists of cards, and the read-only view of one shared by its `shareId`.' },
  { name: 'links', description: "Linked services: the caller's accounts on other services that speak this interface, and copies of cards to and from them." },
  { name: 'admin', description: 'Catalogue cards and families, for operators: tokens with the scope `admin`.' },
  { name: 'operations', description: "Liveness, readiness and the local token issuer's public keys, for operators and load balancers." },
];

interface SharedError {
  name: string;
  description: string;
  /** The codes this status carries, each with an example message. */
  examples: Partial<Record<ErrorCode, string>>;
}

/** The error answers shared by the operations, by status. */
const SHARED_ERRORS: Record<number, SharedError> = {
  400: {
    name: 'BadRequest',
    description: 'The request is malformed or breaks a rule; `error.code` says which.',
    examples: {
      'bad-request': 'body/title must be string',
      'wishlist-limit': 'a user can have at most 10 wishlists',
      'wishlist-size': 'a wishlist can be at most 307200 bytes (300 KiB) of JSON; this one is 310000',
      'group-limit': 'a family can have at most 20 groups',
      'invitation-limit': 'you have 10 open invitations, as many as one may; revoke one or wait until one is used or expires',
      'card-not-eligible': 'card dmPr1 is neither free nor in the club subscription, so it cannot be added to a family library',
    },
  },
  401: {
    name: 'Unauthorized',
    description: 'No bearer token, or one that is malformed, expired or not signed by the issuer; `WWW-Authenticate` says why.',
    examples: { unauthorized: 'missing bearer token (Authorization: Bearer <token>)' },
  },
  403: {
    name: 'Forbidden',
    description:
      'The token is valid but lacks the scope this operation needs (named in `WWW-Authenticate`); on a signed media URL, its signature is wrong or expired, or an upload URL was used already.',
    examples: { forbidden: "this operation needs the scope 'user:content:manage'" },
  },
  404: {
    name: 'NotFound',
    description: 'Nothing with this id that the caller may see.',
    examples: { 'not-found': 'wishlist not found' },
  },
  405: {
    name: 'MethodNotAllowed',
    description: 'The path exists, but not with this method; `Allow` lists the methods it has.',
    examples: { 'method-not-allowed': 'PATCH is not allowed here; use GET, HEAD, POST' },
  },
  409: {
    name: 'IdempotencyKeyInUse',
    description:
      'A request with the same `Idempotency-Key` is still running; retry after `Retry-After` seconds to get its answer.',
    examples: { 'idempotency-key-in-use': 'a request with this Idempotency-Key is still being processed; retry shortly' },
  },
  412: {
    name: 'PreconditionFailed',
    description:
      'The `If-Match` tag is not the current one: the resource changed since it was read, and nothing was written. `ETag` carries the current tag; read it again and reapply the change.',
    examples: { 'precondition-failed': 'group 65f0c1d2e3a4b5c6d7e8f901 has changed since the version named in If-Match; read it again and reapply the change' },
  },
  413: {
    name: 'PayloadTooLarge',
    description: 'The body is larger than the server accepts (`BODY_LIMIT`, 1 MiB by default).',
    examples: { 'payload-too-large': 'request body is too large' },
  },
  415: {
    name: 'UnsupportedMediaType',
    description: 'The body is not `application/json`.',
    examples: { 'unsupported-media-type': "content type 'text/plain' is not accepted: send application/json" },
  },
  422: {
    name: 'IdempotencyKeyReused',
    description: 'The `Idempotency-Key` was used in the last 24 hours for another request (another path or body).',
    examples: { 'idempotency-key-reused': 'this Idempotency-Key was used for a different request; use a new key for a new request' },
  },
  416: {
    name: 'RangeNotSatisfiable',
    description: 'The `Range` asked for lies outside the stored bytes; `Content-Range: bytes */<size>` gives their size.',
    examples: { 'range-not-satisfiable': 'the range asked for is outside the 4912345 bytes stored' },
  },
  429: {
    name: 'RateLimited',
    description: 'Too many requests from this client this minute; `Retry-After` says when to try again.',
    examples: { 'rate-limited': 'rate limit exceeded, retry in 1 minute' },
  },
  502: {
    name: 'RemoteFailed',
    description: 'A linked service (another server this one called for the caller) did not answer, or answered what it should not.',
    examples: { 'remote-failed': "the remote's sign-in did not start: connect ECONNREFUSED" },
  },
  503: {
    name: 'Unavailable',
    description:
      "The server is overloaded or shutting down, or its database or token issuer does not answer; `Retry-After` (when sent) says when to retry.",
    examples: { unavailable: 'the database cannot be reached; try again later' },
  },
};

/**
 * The document (generated from the routes added after this: `describeRoutes` completes each one
 * as it is added) and its pages at /docs. `/openapi.json` is an operations route.
 */
export async function registerApiDocument(app: FastifyInstance, config: Readonly<Config>): Promise<void> {
  app.addHook('onRoute', describeRoutes(config));
  await app.register(swagger, {
    openapi: documentOptions(config),
    transformObject: finishDocument,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
}

/** Swagger's `openapi` option: everything of the document that is not a route. */
function documentOptions(config: Readonly<Config>): NonNullable<FastifyDynamicSwaggerOptions['openapi']> {
  const tokenHelp =
    config.auth.mode === 'local'
      ? 'Tokens come from the local issuer: `npx cardshelf token --sub <user id> --scope "<scopes>"` on the server ' +
        '(`--expires-in`, default 1h; `npx cardshelf seed --demo` prints one for the demo user).'
      : `Tokens come from the OpenID Connect issuer ${config.auth.issuer} (audience \`${config.auth.audience}\`).`;
  return {
    openapi: '3.1.0',
    info: {
      title: 'Cardshelf',
      version: '1.0.0',
      description:
        "Families' audio-card libraries: MYO cards, the family and its library, library groups and wishlists.\n\n" +
        'Errors are `{"error": {"code", "message"}}`. A path used with a method it does not have answers 405 ' +
        '(`#/components/responses/MethodNotAllowed`), with `Allow`. Every answer has an `x-request-id` header ' +
        "(the caller's own when well-formed), to quote when reporting a problem.",
    },
    servers: [{ url: '/', description: 'This Cardshelf server (the one serving this document)' }],
    tags: TAGS,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            `A JWT in \`Authorization: Bearer <token>\`. ${tokenHelp} Scopes (the \`scope\` claim, space-separated, ` +
            'or a `permissions` array): `user:content:view`, `user:content:manage`, `family:library:view`, ' +
            '`family:library:manage`, `admin`; a `:manage` scope includes its `:view`. An operation that needs one ' +
            'says so; the others take any valid token.',
        },
      },
      responses: Object.fromEntries(
        Object.values(SHARED_ERRORS).map((e) => [
          e.name,
          {
            description: e.description,
            content: {
              'application/json': {
                schema: { $ref: '#/components/schemas/ErrorBody' },
                examples: Object.fromEntries(
                  Object.entries(e.examples).map(([code, message]) => [
                    code,
                    { summary: code, value: { error: { code, message } } },
                  ]),
                ),
              },
            },
          },
        ]),
      ),
    },
  };
}

type Responses = Record<string, unknown>;

/**
 * The onRoute hook: derives from what the route declares its security, the errors its kind of
 * route can answer (added to its response schemas, so they are serialised as documented) and
 * the scope text. Hidden routes (the document itself, /docs, /metrics) are left alone.
 */
function describeRoutes(config: Readonly<Config>): (route: RouteOptions) => void {
  return (route) => {
    if (!route.schema || route.schema.hide) return;
    // A copy: routes may share one schema object (two paths to one operation).
    const schema = { ...route.schema };
    route.schema = schema;
    const auth = route.config?.auth;
    const responses: Responses = { ...(schema.response as Responses | undefined) };
    // Fastify reads a body sent with any of these methods (and refuses one too large or not JSON).
    const methods = [route.method].flat();
    const hasBody = schema.body !== undefined || methods.some((m) => ['POST', 'PUT', 'DELETE', 'PATCH'].includes(m));

    // A public route may refuse for reasons of its own (a signed URL's signature: 403); the
    // token's 401 and 403 are derived here from `config.auth`.
    const ownRefusal = auth === undefined ? responses[403] : undefined;
    delete responses[401];
    delete responses[403];
    if (auth === undefined) {
      schema.security = [];
      if (ownRefusal) responses[403] = ownRefusal;
    } else {
      schema.security = [{ bearer: auth === null ? [] : [auth] }];
      responses[401] = ErrorRef;
      // Open to any valid token but a player's (src/auth/plugin.ts): a player's is refused.
      if (auth === null && route.config?.players !== true) responses[403] = ErrorRef;
      if (auth !== null) {
        responses[403] = ErrorRef;
        const text = `Needs the scope \`${auth}\`${auth.endsWith(':view') ? ` (or \`${auth.replace(/:view$/, ':manage')}\`)` : ''}.`;
        schema.description = schema.description ? `${schema.description}\n\n${text}` : text;
      }
    }
    // Any request can be malformed before its route runs (a URL that does not decode, a body
    // that is not JSON), and that is a 400.
    responses[400] ??= ErrorRef;
    if (hasBody) {
      // Routes whose own size rule answers an oversized body (wishlists: `wishlist-size`) never send 413.
      if (!route.config?.oversizeCode) responses[413] = ErrorRef;
      responses[415] = ErrorRef;
    }
    if (config.rateLimitPerMinute > 0) responses[429] = ErrorRef;
    // Shutting down (return503OnClosing), load shedding, the database or the token issuer.
    responses[503] = ErrorRef;
    const headers: Record<string, TSchema> = {};
    if (route.config?.conditional === 'read' || route.config?.conditional === 'body') {
      headers['if-none-match'] = Type.Optional(Type.String({ description: IF_NONE_MATCH }));
      responses[304] = { type: 'null', description: NOT_MODIFIED };
    }
    if (route.config?.conditional === 'write') {
      headers['if-match'] = Type.Optional(Type.String({ description: IF_MATCH }));
      responses[412] = ErrorRef;
    }
    if (route.config?.idempotent) {
      headers['idempotency-key'] = Type.Optional(Type.String({ description: IDEMPOTENCY_KEY }));
      responses[409] = ErrorRef;
      responses[422] = ErrorRef;
    }
    if (Object.keys(headers).length > 0) {
      const own = schema.headers as TObject | undefined;
      schema.headers = Type.Object({ ...own?.properties, ...headers });
    }
    schema.response = responses;
  };
}

const NOT_MODIFIED =
  'Not Modified: the answer is still the one whose `ETag` the request named in `If-None-Match`. No body; the `ETag` header repeats the tag.';
const IF_NONE_MATCH =
  'Entity tags (or `*`) of answers the client holds; when one is current, the answer is 304 with no body. Every 200 of this operation carries its `ETag`.';
const IF_MATCH =
  'The entity tag (`ETag`) of the version the change was made on, from a read or from the last write; when it is not current the answer is 412 and nothing changes. Without it, the write happens whatever changed meanwhile.';
const IDEMPOTENCY_KEY =
  `A key of the client's choice, 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters of letters, digits and \`-_.:~+/=\` (a UUID is good), ` +
  'optionally quoted. The same key with the same request within 24 hours answers the first answer again (status and body) ' +
  'with `Idempotent-Replayed: true`, without running it again; with another request, 422; while the first still runs, 409.';

interface Operation {
  summary?: string;
  operationId?: string;
  responses?: Record<string, { description?: string; content?: unknown; $ref?: string }>;
}

const METHODS = ['get', 'head', 'put', 'post', 'delete', 'patch'] as const;

/**
 * Swagger's `transformObject`: operation ids, descriptions of the successful answers, and every
 * error answer as the shared response of its status.
 */
const finishDocument: SwaggerTransformObject = (document) => {
  if (!('openapiObject' in document)) return document.swaggerObject;
  const { openapiObject } = document;
  const paths = (openapiObject.paths ?? {}) as unknown as Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      if (!item[method]) continue;
      // A route of several methods (GET and HEAD) gives each the same objects: each its own copy.
      const op = (item[method] = { ...item[method], responses: { ...item[method].responses } });
      op.operationId = method === 'head' ? operationId(method, path) : (op.operationId ?? operationId(method, path));
      const statuses = Object.keys(op.responses ?? {});
      for (const status of statuses) {
        const shared = SHARED_ERRORS[Number(status)];
        if (shared) {
          op.responses[status] = { $ref: `#/components/responses/${shared.name}` };
        } else if (op.responses[status]!.description === 'Default Response') {
          op.responses[status]!.description = successDescription(method, status, statuses, op.summary);
        }
      }
    }
  }
  addDiscriminatorMappings(openapiObject.components?.schemas ?? {});
  return openapiObject;
};

type ComponentSchema = {
  oneOf?: { $ref?: string }[];
  discriminator?: { propertyName: string; mapping?: Record<string, string> };
  properties?: Record<string, { const?: unknown; enum?: unknown[] }>;
};

/**
 * A `discriminator` names its members by their tag (`card-play`), not by their component names
 * (`CardPlayCommand`): the document says which is which, from each member's constant tag. The
 * schemas cannot carry the mapping themselves (Ajv refuses it; it reads the constants).
 */
function addDiscriminatorMappings(schemas: Record<string, unknown>): void {
  for (const schema of Object.values(schemas) as ComponentSchema[]) {
    const { discriminator, oneOf } = schema;
    if (!discriminator || !oneOf || discriminator.mapping) continue;
    const mapping: Record<string, string> = {};
    for (const { $ref } of oneOf) {
      const member = $ref === undefined ? undefined : (schemas[$ref.replace('#/components/schemas/', '')] as ComponentSchema | undefined);
      // Swagger writes a `const` as a one-value `enum`.
      const property = member?.properties?.[discriminator.propertyName];
      const tag = property?.const ?? (property?.enum?.length === 1 ? property.enum[0] : undefined);
      if (typeof tag === 'string' && $ref !== undefined) mapping[tag] = $ref;
    }
    discriminator.mapping = mapping;
  }
}

/** `GET /wishlists/{wishlistId}` -> `getWishlistsByWishlistId`; `/.well-known/jwks.json` -> `getWellKnownJwksJson`. */
export function operationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => {
      const param = /^\{(.+)\}$/.exec(segment)?.[1];
      return param ? ['by', param] : segment.split(/[^A-Za-z0-9]+/);
    })
    .filter(Boolean);
  return method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

function successDescription(method: string, status: string, statuses: string[], summary = ''): string {
  if (status === '201') return 'Created.';
  if (statuses.includes('201')) return 'It existed already: replaced or updated.';
  if (method === 'delete') return 'Deleted.';
  if (method === 'get') return summary.endsWith('.') ? summary : `${summary}.`;
  return 'Done: the new state.';
}
