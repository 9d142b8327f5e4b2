import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { RawJson } from '../../shared/raw-json.js';
import { mayHoldMediaRef, mediaRefHash } from '../cards/media-ref.js';

/**
 * Signed media URLs (DECISIONS.md, "Wishlists" and "Media"): in wishlist answers (unless
 * `format=raw`) and card reads with `playable=true`, the media references (`service:#<hash>`
 * and `yoto:#<hash>` alike) that the reader may read (read-rights.ts) become signed, expiring
 * access URLs, which the media routes check with `verify`. What is stored, and measured by the
 * size rule, keeps the references.
 */

/** How long a signed URL stays valid, from the start of the window it was signed in. */
export const MEDIA_URL_TTL_SECONDS = 3600;
/**
 * URLs signed within one window of this length are the same URL (their expiry is counted from
 * the window's start), so a signed answer stays byte for byte the same, and keeps its entity
 * tag, for the window: a poll within it can be answered 304. A URL is valid for between
 * TTL - WINDOW and TTL seconds.
 */
export const MEDIA_URL_WINDOW_SECONDS = 300;

export interface MediaUrlSigner {
  /** The signed, expiring access URL of the media reference `ref`; throws for anything else. */
  sign(ref: string, nowMs?: number): string;
  /**
   * `json` with every string that is a media reference, whole, to one of the `readable` hashes
   * replaced by its signed URL; references to other hashes stay as they are.
   */
  signAll(json: RawJson, readable: ReadonlySet<string>, nowMs?: number): RawJson;
  /** The signing window `nowMs` falls in: answers signed in one window are identical. */
  window(nowMs?: number): number;
  /** Names the key without revealing it: answers signed under other keys differ. */
  readonly keyId: string;
  /** Checks the `expires` and `signature` parameters of a URL this signer made for `hash`. */
  verify(hash: string, expires: string, signature: string, nowMs?: number): 'valid' | 'expired' | 'invalid';
}

/**
 * URLs are `template` with `{hash}` replaced, plus `expires` (Unix seconds) and `signature`
 * (base64url HMAC-SHA256 of `<hash>:<expires>` under `secret`), so a media host that shares the
 * secret can check them. The secret is the instance's (src/auth/media-url-secret.ts): never one
 * drawn here, which other workers and instances could not check.
 */
export function createMediaUrlSigner(template: string, secret: string): MediaUrlSigner {
  const mac = (hash: string, expires: string): Buffer => createHmac('sha256', secret).update(`${hash}:${expires}`).digest();

  const window = (nowMs = Date.now()): number => Math.floor(nowMs / 1000 / MEDIA_URL_WINDOW_SECONDS);

  /** Both prefixes name the same media, so they sign to the same URL. */
  function signHash(hash: string, nowMs: number): string {
    const expires = window(nowMs) * MEDIA_URL_WINDOW_SECONDS + MEDIA_URL_TTL_SECONDS;
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
    window,
    keyId: createHash('sha256').update(`${template}\0${secret}`).digest('base64url').slice(0, 16),
    signAll(json, readable, nowMs = Date.now()) {
      // Most answers hold no reference at all: they are sent as they are, without a parse.
      if (readable.size === 0 || !mayHoldMediaRef(json)) return json;
      const signed: unknown = JSON.parse(json, (_key, value: unknown) => {
        const hash = typeof value === 'string' ? mediaRefHash(value) : undefined;
        return hash === undefined || !readable.has(hash) ? value : signHash(hash, nowMs);
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
