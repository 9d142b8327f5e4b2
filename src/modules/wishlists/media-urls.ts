import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RawJson } from '../../shared/raw-json.js';
import { mayHoldMediaRef, mediaRefHash } from '../cards/media-ref.js';

/**
 * Signed media URLs (DECISIONS.md, "Wishlists" and "Media"): in wishlist answers (unless
 * `format=raw`) and card reads with `playable=true`, the media references (`service:#<hash>`
 * and `yoto:#<hash>` alike) become signed, expiring access URLs, which the media routes check
 * with `verify`. What is stored, and measured by the size rule, keeps the references.
 */

/** How long a signed URL stays valid. */
export const MEDIA_URL_TTL_SECONDS = 3600;

export interface MediaUrlSigner {
  /** The signed, expiring access URL of the media reference `ref`; throws for anything else. */
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

  /** Both prefixes name the same media, so they sign to the same URL. */
  function signHash(hash: string, nowMs: number): string {
    const expires = Math.floor(nowMs / 1000) + MEDIA_URL_TTL_SECONDS;
    const signature = mac(hash, String(expires)).toString('base64url');
    const base = template.replaceAll('{hash}', encodeURIComponent(hash));
    return `${base}${base.includes('?') ? '&' : '?'}expires=${expires}&signature=${signature}`;
  }

  function sign(ref: string, nowMs = Date.now()): string {
    const hash = mediaRefHash(ref);
    if (hash === undefined) throw new Error(`not a media reference: ${ref}`);
    return signHash(hash, nowMs);
  }

  return {
    sign,
    signAll(json, nowMs = Date.now()) {
      // Most answers hold no reference at all: they are sent as they are, without a parse.
      if (!mayHoldMediaRef(json)) return json;
      const signed: unknown = JSON.parse(json, (_key, value: unknown) => {
        const hash = typeof value === 'string' ? mediaRefHash(value) : undefined;
        return hash === undefined ? value : signHash(hash, nowMs);
      });
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
