import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PAGE_CSP } from './pages.js';
import { AppError } from '../shared/errors.js';

/** How long a form stays good after its page was shown. */
const FORM_TTL_MS = 3_600_000;

export interface FormGuard {
  /**
   * The token a form for `purpose` carries: the time it was shown and an HMAC of it, of the
   * purpose and of `boundTo` (the session the form belongs to: an app's sign-in in progress,
   * an account page session), when there is one.
   */
  tokenFor(purpose: string, boundTo?: string): string;
  /**
   * Refuses (403) a post of a `purpose` form without a fresh token made for the same `boundTo`,
   * or from another site.
   */
  check(request: FastifyRequest, purpose: string, sent: string | undefined, boundTo?: string): void;
}

/**
 * CSRF protection of every form of the pages (an app's sign-in and approval, invitations,
 * sign-up, the set-up link, the account page): one scheme. The token is an HMAC of the time the
 * page was shown, good for an hour, bound to the session it was shown in where there is one (so
 * a token from another sign-in or another account page session is refused); and a post the
 * browser says comes from another site is refused: `Sec-Fetch-Site` (every current browser), or
 * `Origin` (which is "null" under the no-referrer policy the app sends, so only a real other
 * origin is refused by it).
 */
export function createFormGuard(publicBaseUrl: string, cookieKeys: string[]): FormGuard {
  const origin = new URL(publicBaseUrl).origin;
  const key = Buffer.from(hkdfSync('sha256', cookieKeys[0]!, 'cardshelf', 'account forms', 32));
  // Lengths first, so that no purpose and binding run together into another pair's text.
  const mac = (purpose: string, boundTo: string, issued: string): string =>
    createHmac('sha256', key).update(`${purpose.length}:${purpose}:${boundTo.length}:${boundTo}:${issued}`).digest('base64url');
  return {
    tokenFor(purpose, boundTo = '') {
      const issued = String(Date.now());
      return `${issued}.${mac(purpose, boundTo, issued)}`;
    },
    check(request, purpose, sent, boundTo = '') {
      const site = request.headers['sec-fetch-site'];
      const sentOrigin = request.headers.origin;
      const otherSite = (site !== undefined && site !== 'same-origin' && site !== 'none') || (sentOrigin !== undefined && sentOrigin !== 'null' && sentOrigin !== origin);
      const [issued = '', given = ''] = (sent ?? '').split('.');
      const expected = Buffer.from(mac(purpose, boundTo, issued));
      const fresh = Date.now() - Number(issued) < FORM_TTL_MS;
      const matches = given.length === expected.length && timingSafeEqual(Buffer.from(given), expected);
      if (otherSite || !fresh || !matches) {
        throw new AppError('forbidden', 'this form is out of date or was not sent from this site; open the page again');
      }
    },
  };
}

/**
 * Form posts (`application/x-www-form-urlencoded`, 8 KiB at most) as a flat record, in `app`'s
 * scope: the one form parser of the pages.
 */
export function acceptForms(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 8192 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
}

/** A page, with the pages' own Content-Security-Policy, never cached. */
export const sendPage = (reply: FastifyReply, status: number, body: string): FastifyReply =>
  reply.code(status).header('content-security-policy', PAGE_CSP).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);
