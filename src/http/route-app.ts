import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { RawJson } from '../shared/raw-json.js';

/** The Fastify instance routes are registered on: TypeBox schemas give the handlers their types. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** The content type of every JSON answer. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Sends JSON that is already serialised (stored documents spliced into a response, or the bytes
 * of an answer kept by http/answer-cache.ts). Fastify passes a string with a JSON content type,
 * or a Buffer, through as it is.
 */
// Any route's reply, whatever its schema-typed generics: the body is JSON already, not a typed value.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function sendRaw(reply: FastifyReply<any, any, any, any, any, any, any, any>, status: number, body: RawJson | Buffer): FastifyReply<any, any, any, any, any, any, any, any> {
  return reply.code(status).type(JSON_CONTENT_TYPE).send(body);
}

/** A route's own hooks of one kind, as an array (Fastify takes one, an array, or none). */
export function hooksOf<H>(hooks: H | H[] | undefined): H[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}
