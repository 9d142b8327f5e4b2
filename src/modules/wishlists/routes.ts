import { sendRaw, type App } from '../../http/route-app.js';
import { ErrorRef, StatusOk, authErrors } from '../../shared/schemas.js';
import {
  FormatQuery,
  ShareParams,
  SharedWishlist,
  Wishlist,
  WishlistBody,
  WishlistList,
  WishlistParams,
  WISHLIST_BODY_LIMIT,
} from './schemas.js';
import type { SignedAnswers } from '../media/signed-answers.js';
import { MAX_WISHLIST_BYTES, MAX_WISHLISTS_PER_USER } from './rules.js';
import type { TaggedWishlist, WishlistService } from './service.js';
import type { RawJson } from '../../shared/raw-json.js';
import { ifMatchOf, sendTagged } from '../../http/conditional.js';
import { answerWithWrite } from '../../http/idempotency.js';
import type { FastifyReply, FastifyRequest } from 'fastify';

const WishlistRef = { $ref: 'Wishlist' } as unknown as typeof Wishlist;

/**
 * Wishlist routes. Any valid token will do. `format=raw` answers media references as stored;
 * without it (or with any other value) those the caller may read (media/read-rights.ts) are
 * answered as signed, expiring URLs (media/signed-answers.ts), the others as stored.
 */
export async function wishlistRoutes(
  app: App,
  opts: { wishlists: WishlistService; signed: SignedAnswers },
): Promise<void> {
  const { wishlists, signed } = opts;
  /** A read in the form asked for: raw answers carry the data's tag, signed ones their own. */
  const sendRead = async (
    req: FastifyRequest,
    reply: FastifyReply,
    format: string | undefined,
    tag: string,
    render: () => Promise<RawJson>,
  ): Promise<FastifyReply> => {
    if (format === 'raw') return sendTagged(req, reply, tag, render);
    const answer = signed.forWishlist(req.principal.userId, tag, render);
    return sendTagged(req, reply, answer.tag, answer.body, { keep: false });
  };
  /** A write's answer carries the tag a read of the same form (by the writer) would. */
  const writeTag = (tag: string, format: string | undefined, userId: string): string =>
    format === 'raw' ? tag : signed.tag(tag, userId);
  const tags = ['wishlists'];
  // A body over the limit is the size rule broken, so it answers `wishlist-size`, not 413.
  const writeConfig = { auth: null, oversizeCode: 'wishlist-size' as const };

  app.post('/wishlists', {
    config: { ...writeConfig, idempotent: true },
    bodyLimit: WISHLIST_BODY_LIMIT,
    schema: {
      tags,
      summary: 'Create a wishlist',
      description: `At most ${MAX_WISHLISTS_PER_USER} wishlists a user (400 \`wishlist-limit\`) and ${MAX_WISHLIST_BYTES / 1024} KiB of JSON a wishlist (400 \`wishlist-size\`). \`wishlistId\` and \`shareId\` are generated; values sent for them are ignored.`,
      querystring: FormatQuery,
      body: WishlistBody,
      response: { 201: WishlistRef, ...authErrors },
    },
    handler: async (req, reply) => {
      const { userId } = req.principal;
      const { format } = req.query;
      // The answer is made in the create's transaction, with its key's answer, where no other
      // query may run: the rights to sign it are read first, from the content sent (a new
      // wishlist grants none).
      const sign = format === 'raw' ? undefined : await signed.wishlistSigner(userId, JSON.stringify({ content: req.body.content }) as RawJson);
      const { result, answer } = await answerWithWrite(
        req,
        (alsoCommit) => wishlists.create(userId, req.body, alsoCommit),
        ({ wishlist }: TaggedWishlist) => ({ status: 201, body: sign ? sign(wishlist) : wishlist }),
      );
      return sendRaw(reply.header('etag', writeTag(result.tag, format, userId)), answer.status, answer.body);
    },
  });

  app.put('/wishlists/:wishlistId', {
    config: { ...writeConfig, conditional: 'write' },
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
    handler: async (req, reply) => {
      const { userId } = req.principal;
      const { format } = req.query;
      const { wishlist, tag } = await wishlists.update(userId, req.params.wishlistId, req.body, ifMatchOf(req));
      const body = format === 'raw' ? wishlist : (await signed.wishlistSigner(userId, wishlist))(wishlist);
      return sendRaw(reply.header('etag', writeTag(tag, format, userId)), 200, body);
    },
  });

  app.get('/wishlists', {
    config: { auth: null, conditional: 'read' },
    schema: {
      tags,
      summary: "The caller's wishlists, oldest first",
      querystring: FormatQuery,
      response: { 200: WishlistList, ...authErrors },
    },
    handler: async (req, reply) => {
      const { userId } = req.principal;
      return sendRead(req, reply, req.query.format, await wishlists.listTag(userId), () => wishlists.list(userId));
    },
  });

  app.get('/wishlists/:wishlistId', {
    config: { auth: null, conditional: 'read' },
    schema: {
      tags,
      summary: 'One of your wishlists',
      params: WishlistParams,
      querystring: FormatQuery,
      response: { 200: WishlistRef, ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) => {
      const { userId } = req.principal;
      const { wishlistId } = req.params;
      const tag = await wishlists.tag(userId, wishlistId);
      return sendRead(req, reply, req.query.format, tag, () => wishlists.get(userId, wishlistId));
    },
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
    config: { auth: null, conditional: 'read' },
    schema: {
      tags,
      summary: 'A shared wishlist, read-only, for any signed-in user',
      description: "The wishlist and its owner's display name (`ownerName`, null when none).",
      params: ShareParams,
      querystring: FormatQuery,
      response: { 200: SharedWishlist, ...authErrors, 404: ErrorRef },
    },
    handler: async (req, reply) => {
      const { shareId } = req.params;
      const tag = await wishlists.sharedTag(shareId);
      return sendRead(req, reply, req.query.format, tag, () => wishlists.shared(shareId));
    },
  });
}
