import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RawJson } from '../../shared/raw-json.js';

/**
 * Signed media URLs (DECISIONS.md, "Wishlists" and "Media"): in wishlist answers (unless
 * `format=raw`) and card reads with `playable=true`, the media references (`service:#<hash>`,
 * `yoto:#<hash>`) become signed, expiring access URLs, which the media routes check with
 * `verify`. What is stored keeps the references.
 */

/** How long a signed URL stays valid. */
export const MEDIA_URL_TTL_SECONDS = 3600;

/** `service:#<hash>` or `yoto:#<hash>` (the public service's own prefix): the same media. */
const MEDIA_REF = /^(?:service|yoto):#([^\s#]+)$/;

export interface MediaUrlSigner {
  /** The signed, expiring access URL of the media reference `ref`. */
  sign(ref: string, nowMs?: number): string;
  /** `json` with every string that is a media reference, whole, replaced by its signed URL. */
  signAll(json: RawJson, nowMs?: number): RawJson;
  /** Checks the `expires` and `signature` parameters of a URL this signer made for `hash`. */
  verify(hash: string, expires: string, signature: string, nowMs?: number): 'valid' | 'expired' | 'invalid';
}

/**
 * URLs are `template` with `{hash}` replaced, plus `expires` (Unix seconds) and `signature`
 * (base64url HMAC-SHA256 of `<hash>:<expires>` under `secret`), so a media host that shares the
 * secret can check them. Without a configured secret, one is drawn for this process.
 */
export function createMediaUrlSigner(template: string, secret: string | undefined): MediaUrlSigner {
  const key = secret ?? randomBytes(32).toString('base64url');

  const mac = (hash: string, expires: string): Buffer => createHmac('sha256', key).update(`${hash}:${expires}`).digest();

  function sign(ref: string, nowMs = Date.now()): string {
    const hash = MEDIA_REF.exec(ref)?.[1] ?? ref;
    const expires = Math.floor(nowMs / 1000) + MEDIA_URL_TTL_SECONDS;
    const signature = mac(hash, String(expires)).toString('base64url');
    const base = template.replaceAll('{hash}', encodeURIComponent(hash));
    return `${base}${base.includes('?') ? '&' : '?'}expires=${expires}&signature=${signature}`;
  }

  return {
    sign,
    signAll(json, nowMs = Date.now()) {
      // Most answers hold no reference at all: they are sent as they are, without a parse.
      if (!json.includes(':#')) return json;
      const signed: unknown = JSON.parse(json, (_key, value: unknown) =>
        typeof value === 'string' && MEDIA_REF.test(value) ? sign(value, nowMs) : value,
      );
      return JSON.stringify(signed) as RawJson;
    },
    verify(hash, expires, signature, nowMs = Date.now()) {
      if (!/^\d{1,12}$/.test(expires)) return 'invalid';
      const given = Buffer.from(signature, 'base64url');
      const wanted = mac(hash, expires);
      if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return 'invalid';
      return Number(expires) * 1000 <= nowMs ? 'expired' : 'valid';
    },
  };
}
