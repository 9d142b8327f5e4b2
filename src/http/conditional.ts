import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendAsyncHookHandler } from 'fastify';
import { badRequest } from '../shared/errors.js';
import type { Precondition } from '../shared/entity-tag.js';
import { hooksOf, sendRaw } from './route-app.js';
import type { RawJson } from '../shared/raw-json.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `read`: the route answers with an ETag (from the data's versions, see
     * shared/entity-tag.ts) and honours If-None-Match (304); `body`: the same, with a tag
     * hashed from the rendered answer, for reads no counter covers (it saves the bytes, not the
     * work); `write`: it honours If-Match (412). The OpenAPI hook documents them from this.
     */
    conditional?: 'read' | 'body' | 'write';
  }
}

/**
 * Conditional requests (RFC 9110, section 13): `If-None-Match` on reads, `If-Match` on the
 * writes that take it. The tags come from the services (src/shared/entity-tag.ts); this module
 * reads the headers and answers 304.
 */

/** One entity tag: optional `W/`, then a quoted string of etagc characters. */
const ENTITY_TAG = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

interface TagList {
  any: boolean;
  tags: { weak: boolean; opaque: string }[];
}

/** `*` or a comma-separated list of entity tags; undefined when malformed. */
function parseTagList(header: string): TagList | undefined {
  const trimmed = header.trim();
  if (trimmed === '*') return { any: true, tags: [] };
  const tags: TagList['tags'] = [];
  // Entity tags cannot hold a comma, so the list splits on them; empty members are allowed (RFC 9110 5.6.1).
  for (const member of trimmed.split(',')) {
    const item = member.trim();
    if (item === '') continue;
    if (!ENTITY_TAG.test(item)) return undefined;
    const weak = item.startsWith('W/');
    tags.push({ weak, opaque: weak ? item.slice(2) : item });
  }
  return tags.length > 0 ? { any: false, tags } : undefined;
}

/** A header given more than once arrives joined by Node, except when it is not a string. */
const headerText = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value.join(', ') : value;

/**
 * Whether `If-None-Match` names the current tag (weak comparison: `W/"x"` matches `"x"`), so a
 * read can answer 304. A malformed header is ignored (RFC 9110 lets a server answer 200).
 */
export function noneMatchHits(request: FastifyRequest, current: string): boolean {
  const header = headerText(request.headers['if-none-match']);
  if (header === undefined) return false;
  const list = parseTagList(header);
  if (!list) return false;
  return list.any || list.tags.some((t) => t.opaque === current);
}

/**
 * `If-Match` as the services take it: undefined without the header, `*`, or the strong tags it
 * lists (a weak tag never matches strongly, RFC 9110 13.1.1). A malformed header is a 400: a
 * precondition the server cannot read must not be skipped, or the update it guards could be lost.
 */
export function ifMatchOf(request: FastifyRequest): Precondition | undefined {
  const header = headerText(request.headers['if-match']);
  if (header === undefined) return undefined;
  const list = parseTagList(header);
  if (!list) throw badRequest('If-Match must be "*" or a list of entity tags, such as "abc" or W/"abc"');
  return list.any ? '*' : list.tags.filter((t) => !t.weak).map((t) => t.opaque);
}

/** Answers depend on the token: no shared cache may keep them, and clients revalidate. */
function tagAnswer(reply: FastifyReply, tag: string): void {
  reply.header('etag', tag).header('cache-control', 'private, no-cache');
}

/**
 * Gives a read's answer its tag, and answers 304 (no body) when `If-None-Match` names it: true
 * when it did, and the route must send nothing more. The caller reads the tag before it renders
 * the answer, so a 200's body is never older than its tag.
 */
export function answeredNotModified(request: FastifyRequest, reply: FastifyReply, tag: string): boolean {
  tagAnswer(reply, tag);
  if (!noneMatchHits(request, tag)) return false;
  void reply.code(304).send();
  return true;
}

/**
 * A read of stored JSON: 304 when `If-None-Match` names `tag`, else 200 with what `render`
 * makes, or with the bytes sent before under the same tag (http/answer-cache.ts). `keep: false`
 * for answers whose rendering decides more than the tag names: a signed answer reads who may
 * read its media when it is rendered, and that must be read again for every 200.
 */
export async function sendTagged(
  request: FastifyRequest,
  reply: FastifyReply,
  tag: string,
  render: () => Promise<RawJson> | RawJson,
  { keep = true }: { keep?: boolean } = {},
): Promise<FastifyReply> {
  if (answeredNotModified(request, reply, tag)) return reply;
  const cache = keep ? request.server.answerCache : undefined;
  if (!cache) return sendRaw(reply, 200, await render());
  const kept = cache.get(request, tag);
  if (kept) return sendRaw(reply, 200, kept);
  const body = Buffer.from(await render());
  cache.set(request, tag, body);
  return sendRaw(reply, 200, body);
}

/**
 * `sendTagged` for reads that can read their tag and their answer in one statement. Without
 * the answer cache, a request without If-None-Match (a first read) does so; a revalidation
 * reads the tag alone first, since it usually ends in a 304. With the cache every read starts
 * with the tag alone, since it usually finds the answer kept; on a miss the answer is read with
 * its tag again, so the bytes kept and the tag they are kept under come from one snapshot.
 */
export async function sendTaggedRead(
  request: FastifyRequest,
  reply: FastifyReply,
  read: { tag: () => Promise<string>; both: () => Promise<{ tag: string; body: RawJson }> },
): Promise<FastifyReply> {
  const cache = request.server.answerCache;
  if (request.headers['if-none-match'] !== undefined || cache) {
    const tag = await read.tag();
    if (answeredNotModified(request, reply, tag)) return reply;
    const kept = cache?.get(request, tag);
    if (kept) return sendRaw(reply, 200, kept);
  }
  const { tag, body } = await read.both();
  tagAnswer(reply, tag);
  if (!cache) return sendRaw(reply, 200, body);
  const bytes = Buffer.from(body);
  cache.set(request, tag, bytes);
  return sendRaw(reply, 200, bytes);
}

/**
 * Routes with `conditional: 'body'`: a 200's tag is a hash of its bytes, made as it is sent, and
 * a matching If-None-Match turns it into a 304 with no body. The media listings and the
 * transcode poll keep no counter of their own; their answers are small.
 */
export function registerBodyTags(app: FastifyInstance): void {
  // Decided once per route as it is added: other routes pay nothing for it.
  app.addHook('onRoute', (route) => {
    if (route.config?.conditional !== 'body') return;
    route.onSend = [...hooksOf(route.onSend), tagBody];
  });
}

const tagBody: onSendAsyncHookHandler = async (request, reply, payload) => {
  if (reply.statusCode !== 200) return payload;
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
  const tag = `"b${createHash('sha256').update(payload).digest('base64url').slice(0, 26)}"`;
  reply.header('etag', tag).header('cache-control', 'private, no-cache');
  if (!noneMatchHits(request, tag)) return payload;
  reply.code(304).removeHeader('content-type');
  return null;
};
