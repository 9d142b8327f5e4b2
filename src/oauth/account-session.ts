import { requestCookie } from './request-cookie.js';
import type { FastifyRequest } from 'fastify';
import { ACCOUNT_SESSION_MS, type AccountSession, type AccountSessions } from '../accounts/account-sessions.js';

const COOKIE = 'cardshelf_account';
const PATH = '/account';

export interface AccountSessionCookie {
  /** The live session the request's cookie opens, if any (a database lookup: /account only). */
  current(request: FastifyRequest): Promise<AccountSession | undefined>;
  /** Starts a session for `userId`; answers its `Set-Cookie`. */
  signIn(userId: string): Promise<string>;
  /** Ends `session` (the request's, if it has one); answers the `Set-Cookie` that clears the cookie. */
  signOut(session: AccountSession | undefined): Promise<string>;
}

/**
 * The account page's cookie: a random secret naming a session kept on the server
 * (src/accounts/account-sessions.ts), so that it is worth nothing once the session ended.
 * `HttpOnly`, `SameSite=Lax`, `Secure` over https, and sent only to /account.
 */
export function accountSessionCookie(sessions: AccountSessions, opts: { secure: boolean }): AccountSessionCookie {
  const attributes = `Path=${PATH}; HttpOnly; SameSite=Lax${opts.secure ? '; Secure' : ''}`;
  return {
    current: (request) => sessions.find(requestCookie(request, COOKIE) ?? ''),
    async signIn(userId) {
      return `${COOKIE}=${await sessions.start(userId)}; Max-Age=${ACCOUNT_SESSION_MS / 1000}; ${attributes}`;
    },
    async signOut(session) {
      if (session) await sessions.end(session.id);
      return `${COOKIE}=; Max-Age=0; ${attributes}`;
    },
  };
}
