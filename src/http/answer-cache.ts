import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';

declare module 'fastify' {
  interface FastifyInstance {
    /** The answers of tagged reads, by tag (undefined when ANSWER_CACHE_MB is 0). */
    answerCache: AnswerCache | undefined;
  }
}

/**
 * The bytes of tagged reads' answers, kept by their entity tag, in this process.
 *
 * A strong entity tag names one representation (RFC 9110, 8.8.3): the tags of
 * shared/entity-tag.ts are made from every counter and version an answer shows, and from what
 * else shapes it. So a read that finds the same tag again may send the bytes it sent before
 * instead of reading and rendering them again, exactly as a client holding them may be answered
 * 304. Reading the tag stays a database read on every request, so every instance sees every
 * other's writes at once; only the rendering is kept. The key also names the route and the
 * caller, so that no answer can reach another route or user even if two tags were alike.
 *
 * Bounded by bytes (least recently used out first).
 */
export interface AnswerCache {
  get(request: FastifyRequest, tag: string): Buffer | undefined;
  set(request: FastifyRequest, tag: string, body: Buffer): void;
}

export function createAnswerCache(maxBytes: number): AnswerCache | undefined {
  if (maxBytes <= 0) return undefined;
  const lru = new LRUCache<string, Buffer>({
    maxSize: maxBytes,
    // The key's own length counts too: many small answers are mostly key.
    sizeCalculation: (body, key) => body.length + key.length,
  });
  const keyOf = (request: FastifyRequest, tag: string): string =>
    `${request.principal?.userId ?? ''}\0${request.routeOptions.url ?? ''}\0${tag}`;
  return {
    get: (request, tag) => lru.get(keyOf(request, tag)),
    set(request, tag, body) {
      // An answer larger than the whole cache would only evict everything else.
      if (body.length < maxBytes / 4) lru.set(keyOf(request, tag), body);
    },
  };
}

export function registerAnswerCache(app: FastifyInstance, maxBytes: number): void {
  app.decorate('answerCache', createAnswerCache(maxBytes));
}
