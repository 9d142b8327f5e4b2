import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** How long the account page stays signed in. */
export const ACCOUNT_SESSION_MS = 12 * 3_600_000;
const COOKIE = 'cardshelf_account';
const PATH = '/account';

export interface AccountSession {
  /** The signed-in account's user id, if the request carries a good, unexpired cookie. */
  userId(request: FastifyRequest): string | undefined;
  /** `Set-Cookie` that signs `userId` in to the account page. */
  signIn(userId: string): string;
  /** `Set-Cookie` that signs out. */
  signOut(): string;
}

/**
 * The account page's own sign-in: a cookie holding the user id and its expiry, with an HMAC
 * (key derived from the sign-in cookies' keys, so every instance reads it). `HttpOnly`,
 * `SameSite=Lax`, `Secure` over https, and sent only to /account. Whether the account may still
 * sign in (not disabled) is checked on every request by the caller.
 */
export function createAccountSession(opts: { cookieKeys: string[]; secure: boolean; now?: () => number }): AccountSession {
  const key = Buffer.from(hkdfSync('sha256', opts.cookieKeys[0]!, 'cardshelf', 'account page session', 32));
  const now = opts.now ?? Date.now;
  const mac = (body: string): string => createHmac('sha256', key).update(body).digest('base64url');
  const attributes = `Path=${PATH}; HttpOnly; SameSite=Lax${opts.secure ? '; Secure' : ''}`;

  return {
    userId(request) {
      const header = request.headers.cookie ?? '';
      const value = header
        .split(';')
        .map((part) => part.trim())
        .find((part) => part.startsWith(`${COOKIE}=`))
        ?.slice(COOKIE.length + 1);
      const [id = '', expires = '', given = ''] = (value ?? '').split('.');
      const expected = Buffer.from(mac(`${id}.${expires}`));
      if (given.length !== expected.length || !timingSafeEqual(Buffer.from(given), expected)) return undefined;
      if (!(Number(expires) > now())) return undefined;
      return Buffer.from(id, 'base64url').toString('utf8');
    },
    signIn(userId) {
      const body = `${Buffer.from(userId).toString('base64url')}.${now() + ACCOUNT_SESSION_MS}`;
      return `${COOKIE}=${body}.${mac(body)}; Max-Age=${ACCOUNT_SESSION_MS / 1000}; ${attributes}`;
    },
    signOut() {
      return `${COOKIE}=; Max-Age=0; ${attributes}`;
    },
  };
}
