import type { FastifyRequest } from 'fastify';
import { requestCookie } from './request-cookie.js';
import { DEVICE_TOKEN_TTL_MS } from '../accounts/device-cookies.js';

/**
 * The device cookie (src/accounts/device-cookies.ts) on the wire: sent to every password form
 * (the sign-in pages under /interaction and the account page's), `HttpOnly`, `SameSite=Lax`,
 * `Secure` over https.
 */
const COOKIE = 'cardshelf_device';

export function deviceCookieOf(request: FastifyRequest): string | undefined {
  return requestCookie(request, COOKIE);
}

/** `Set-Cookie` for the cookie value `value`. */
export function deviceCookieHeader(value: string, secure: boolean): string {
  return `${COOKIE}=${value}; Max-Age=${DEVICE_TOKEN_TTL_MS / 1000}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}
