import { sendRaw, type App } from '../../http/route-app.js';
import { ErrorRef, StatusOk, authErrors } from '../../shared/schemas.js';
import {
  FormatQuery,
  ShareParams,
  Wishlist,
  WishlistBody,
  WishlistList,
  WishlistParams,
  WISHLIST_BODY_LIMIT,
} from './schemas.js';
import type { MediaUrlSigner } from './media-urls.js';
import type { WishlistService } from './service.js';
import type { RawJson } from '../../shared/raw-json.js';

const WishlistRef = { $ref: 'Wishlist' } as unknown as typeof Wishlist;

/**
 * Wishlist routes. Any valid token will do. `format=raw` answers media references as stored;
 * without it (or with any other value) they are answered as signed, expiring URLs.
 */
export async function wishlistRoutes(
  app: App,
  opts: { wishlists: WishlistService; media: MediaUrlSigner },
): Promise<void> {
  const { wishlists, media } = opts;
  const present = (json: RawJson, format: string | undefined): RawJson =>
    format === 'raw' ? json : media.signAll(json);
  const tags = ['wishlists'];
  // A body over the limit is the size rule broken, so it answers `wishlist-size`, not 413.
  const writeConfig = { auth: null, oversizeCode: 'wishlist-size' as const };

  app.post('/wishlists', {
    config: writeConfig,
    bodyLimit: WISHLIST_BODY_LIMIT,
    schema: {
      tags,
      summary: 'Create a wishlist',
      description:
        'At most 10 wishlists a user (400 `wishlist-limit`) and 300 KiB of JSON a wishlist (400 `wishlist-size`). `wishlistId` and `shareId` are generated; values sent for them are ignored.',
      querystring: FormatQuery,
      body: WishlistBody,
      response: { 201: WishlistRef, ...authErrors },
    },
    handler: async (req, reply) =>
      sendRaw(reply, 201, present(await wishlists.create(req.principal.userId, req.body), req.query.format)),
  });

  app.put('/wishlists/:wishlistId', {
    config: writeConfig,
    bodyLimit: WISHLIST_BODY_LIMIT,
    schema: {
      tags,
      summary: "Replace a wishlist's content",
      description: '`userId`, `wishlistId` and `shareId` cannot be changed. Other users\' wishlists answer 404.',
      params: WishlistParams,
      querystring: FormatQuery,
      body: WishlistBody,
      response: { 200: WishlistRef, ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) =>
      sendRaw(
        reply,
        200,
        present(await wishlists.update(req.principal.userId, req.params.wishlistId, req.body), req.query.format),
      ),
  });

  app.get('/wishlists', {
    config: { auth: null },
    schema: {
      tags,
      summary: "The caller's wishlists, oldest first",
      querystring: FormatQuery,
      response: { 200: WishlistList, ...authErrors },
    },
    handler: async (req, reply) =>
      sendRaw(reply, 200, present(await wishlists.list(req.principal.userId), req.query.format)),
  });

  app.get('/wishlists/:wishlistId', {
    config: { auth: null },
    schema: {
      tags,
      summary: 'One of your wishlists',
      params: WishlistParams,
      querystring: FormatQuery,
      response: { 200: WishlistRef, ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) =>
      sendRaw(reply, 200, present(await wishlists.get(req.principal.userId, req.params.wishlistId), req.query.format)),
  });

  app.delete('/wishlists/:wishlistId', {
    config: { auth: null },
    schema: {
      tags,
      summary: 'Delete one of your wishlists',
      params: WishlistParams,
      response: { 200: StatusOk, ...authErrors, 404: ErrorRef },
    },
    handler: async (req) => {
      await wishlists.remove(req.principal.userId, req.params.wishlistId);
      return { status: 'ok' as const };
    },
  });

  app.get('/wishlists/shared/:shareId', {
    config: { auth: null },
    schema: {
      tags,
      summary: 'A shared wishlist, read-only, for any signed-in user',
      params: ShareParams,
      querystring: FormatQuery,
      response: { 200: WishlistRef, ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) =>
      sendRaw(reply, 200, present(await wishlists.shared(req.params.shareId), req.query.format)),
  });
}
