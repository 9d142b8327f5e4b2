import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PAGE_CSP } from './pages.js';
import { AppError } from '../shared/errors.js';

/** How long a form stays good after its page was shown. */
const FORM_TTL_MS = 3_600_000;

export interface FormGuard {
  /** The token a form for `purpose` carries: the time it was shown and an HMAC of it. */
  tokenFor(purpose: string): string;
  /** Refuses (403) a post of a `purpose` form without a fresh token, or from another site. */
  check(request: FastifyRequest, purpose: string, sent: string | undefined): void;
}

/**
 * CSRF protection of the forms outside an app's sign-in (invitations, sign-up, the account
 * page). The token is an HMAC of the time the page was shown, good for an hour; and a post the
 * browser says comes from another site is refused: `Sec-Fetch-Site` (every current browser), or
 * `Origin` (which is "null" under the no-referrer policy the app sends, so only a real other
 * origin is refused by it).
 */
export function createFormGuard(publicBaseUrl: string, cookieKeys: string[]): FormGuard {
  const origin = new URL(publicBaseUrl).origin;
  const key = Buffer.from(hkdfSync('sha256', cookieKeys[0]!, 'cardshelf', 'account forms', 32));
  const mac = (purpose: string, issued: string): string => createHmac('sha256', key).update(`${purpose}:${issued}`).digest('base64url');
  return {
    tokenFor(purpose) {
      const issued = String(Date.now());
      return `${issued}.${mac(purpose, issued)}`;
    },
    check(request, purpose, sent) {
      const site = request.headers['sec-fetch-site'];
      const sentOrigin = request.headers.origin;
      const otherSite = (site !== undefined && site !== 'same-origin' && site !== 'none') || (sentOrigin !== undefined && sentOrigin !== 'null' && sentOrigin !== origin);
      const [issued = '', given = ''] = (sent ?? '').split('.');
      const expected = Buffer.from(mac(purpose, issued));
      const fresh = Date.now() - Number(issued) < FORM_TTL_MS;
      const matches = given.length === expected.length && timingSafeEqual(Buffer.from(given), expected);
      if (otherSite || !fresh || !matches) {
        throw new AppError('forbidden', 'this form is out of date or was not sent from this site; open the page again');
      }
    },
  };
}

/** Form posts (`application/x-www-form-urlencoded`, 8 KiB at most) as a flat record, in `app`'s scope. */
export function acceptForms(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 8192 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
}

/** A page, with the pages' own Content-Security-Policy, never cached. */
export const sendPage = (reply: FastifyReply, status: number, body: string): FastifyReply =>
  reply.code(status).header('content-security-policy', PAGE_CSP).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);
