import type { Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import rangeParser from 'range-parser';
import type { Store } from '../../db/dialect.js';
import type { MediaStore } from '../../media-store/media-store.js';
import { SHA256_HEX } from '../../media-store/media-store.js';
import { AppError, notFound } from '../../shared/errors.js';
import type { MediaUrlSigner } from './media-urls.js';
import { PUBLIC_KINDS } from './ownership.js';
import * as repo from './repository.js';

/**
 * Serving stored bytes over HTTP semantics: validators, ranges, HEAD. Nothing here knows
 * Fastify: it answers a status, headers and maybe a stream.
 */
export interface MediaResponse {
  status: 200 | 206 | 304;
  headers: Record<string, string>;
  /** Absent for HEAD and 304. */
  body?: Readable;
}

export interface MediaFiles {
  /** A signed URL's bytes: 403 when the signature is wrong or expired, 404 when not stored. */
  signed(hash: string, query: { expires?: string; signature?: string }, request: RequestHeaders): Promise<MediaResponse>;
  /** The bytes of a public object (cover images and display icons, as the public service). */
  public(mediaId: string, request: RequestHeaders): Promise<MediaResponse>;
}

export interface RequestHeaders {
  method: string;
  range?: string;
  ifNoneMatch?: string;
}

export function createMediaFiles(store: Store, mediaStore: MediaStore, signer: MediaUrlSigner): MediaFiles {
  // Objects never change under their name, so what a GET needs of one (type, size) is kept a
  // while: a player fetching a track range by range costs one lookup, not one each. Only found
  // objects are kept; garbage collection removes objects long after anything names them.
  const known = new LRUCache<string, { contentType: string; size: number }>({ max: 10_000, ttl: 60_000 });

  async function lookUp(sha256: string): Promise<{ contentType: string; size: number } | undefined> {
    const cached = known.get(sha256);
    if (cached) return cached;
    const object = SHA256_HEX.test(sha256) ? await repo.findObject(store.db, sha256) : undefined;
    const stat = object && (await mediaStore.stat(sha256));
    if (!object || !stat) return undefined;
    const found = { contentType: object.content_type, size: stat.size };
    known.set(sha256, found);
    return found;
  }

  async function respond(
    sha256: string,
    request: RequestHeaders,
    cacheControl: string,
  ): Promise<MediaResponse> {
    const object = await lookUp(sha256);
    if (!object) throw notFound('media');
    const size = object.size;
    const etag = `"${sha256}"`;
    const headers: Record<string, string> = {
      'content-type': object.contentType,
      etag,
      'accept-ranges': 'bytes',
      'cache-control': cacheControl,
    };
    if (request.ifNoneMatch && request.ifNoneMatch.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
      return { status: 304, headers };
    }
    let range: { start: number; end: number } | undefined;
    if (request.range) {
      const parsed = rangeParser(size, request.range, { combine: true });
      if (parsed === -1) {
        throw new AppError('range-not-satisfiable', `the range ${request.range} is outside the ${size} bytes of this media`, {
          'content-range': `bytes */${size}`,
          'accept-ranges': 'bytes',
        });
      }
      // A malformed header, or several ranges, is answered with the whole body (RFC 9110 allows it).
      if (parsed !== -2 && parsed.type === 'bytes' && parsed.length === 1) range = parsed[0];
    }
    const head = request.method === 'HEAD';
    if (range) {
      headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`;
      headers['content-length'] = String(range.end - range.start + 1);
      return { status: 206, headers, body: head ? undefined : mediaStore.read(sha256, range) };
    }
    headers['content-length'] = String(size);
    return { status: 200, headers, body: head ? undefined : mediaStore.read(sha256) };
  }

  return {
    async signed(hash, query, request) {
      const verdict = signer.verify(hash, query.expires ?? '', query.signature ?? '');
      if (verdict === 'invalid') throw new AppError('forbidden', 'the signature of this media URL does not match');
      if (verdict === 'expired') throw new AppError('forbidden', 'this media URL has expired: read the card again for a new one');
      // Cached no longer than the URL is valid.
      const maxAge = Math.max(0, Number(query.expires) - Math.floor(Date.now() / 1000));
      return respond(hash, request, `private, max-age=${maxAge}, immutable`);
    },
    async public(mediaId, request) {
      if (!SHA256_HEX.test(mediaId) || !(await repo.heldAs(store.db, mediaId, PUBLIC_KINDS))) throw notFound('media');
      return respond(mediaId, request, 'public, max-age=31536000, immutable');
    },
  };
}
