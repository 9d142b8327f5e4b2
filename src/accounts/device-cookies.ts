import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { emailKey } from './service.js';

/**
 * OWASP's device cookies (Authentication Cheat Sheet, "Device Cookies"): after a successful
 * password sign-in the browser gets a token bound to that email, `<device>.<expires>.<mac>`, the
 * MAC an HMAC of the three (the email is not in the token, so the cookie does not show it). An
 * attempt that presents a valid token for the email it signs in is counted on that device's own
 * counter, not on the email's shared one (src/accounts/password-sign-in.ts): whoever guesses
 * from elsewhere locks the email for the untrusted, not the holder's own browser. A token can be
 * had only by signing in to that email, so an attacker cannot make one for a victim's email.
 * One cookie holds the tokens of the last few emails signed in on that browser (a shared tablet).
 */

/** How long a device stays known after its last password sign-in. */
export const DEVICE_TOKEN_TTL_MS = 90 * 86_400_000;
/** Tokens one cookie keeps, newest first: a family's parents on one tablet. */
const MAX_TOKENS = 5;

export interface DeviceCookies {
  /** The device the cookie value proves for `email` (a valid, unexpired token of it), or undefined. */
  deviceFor(value: string | undefined, email: string): string | undefined;
  /** The cookie value after `email` signed in on this browser: a new token for it, first, and the others kept. */
  issue(value: string | undefined, email: string): string;
}

interface Token {
  device: string;
  expires: string;
  mac: string;
}

export function createDeviceCookies(cookieKeys: string[], now: () => number = Date.now): DeviceCookies {
  const key = Buffer.from(hkdfSync('sha256', cookieKeys[0]!, 'cardshelf', 'device cookies', 32));
  const macOf = (device: string, expires: string, email: string): string => createHmac('sha256', key).update(`${device}.${expires}.${emailKey(email)}`).digest('base64url');
  const tokensOf = (value: string | undefined): Token[] =>
    (value ?? '')
      .split('~')
      .map((text) => text.split('.'))
      .filter((parts) => parts.length === 3 && Number(parts[1]) > now())
      .map(([device = '', expires = '', mac = '']) => ({ device, expires, mac }));
  const isFor = (token: Token, email: string): boolean => {
    const expected = Buffer.from(macOf(token.device, token.expires, email));
    const given = Buffer.from(token.mac);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  return {
    deviceFor(value, email) {
      return tokensOf(value).find((token) => isFor(token, email))?.device;
    },
    issue(value, email) {
      const device = randomBytes(16).toString('base64url');
      const expires = String(now() + DEVICE_TOKEN_TTL_MS);
      const others = tokensOf(value).filter((token) => !isFor(token, email));
      return [{ device, expires, mac: macOf(device, expires, email) }, ...others]
        .slice(0, MAX_TOKENS)
        .map((t) => `${t.device}.${t.expires}.${t.mac}`)
        .join('~');
    },
  };
}
