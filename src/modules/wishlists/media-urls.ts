import { createHmac, randomBytes } from 'node:crypto';
import type { RawJson } from '../../shared/raw-json.js';
import { MEDIA_REF_PATTERN } from '../cards/schemas.js';

/**
 * Signed media URLs (DECISIONS.md, "Wishlists"): unless `format=raw` is asked for, the media
 * references (`service:#<hash>`) in an answer become signed, expiring access URLs. What is
 * stored, and measured by the size rule, keeps the references.
 */

/** How long a signed URL stays valid. */
export const MEDIA_URL_TTL_SECONDS = 3600;

const MEDIA_REF = new RegExp(MEDIA_REF_PATTERN);
const PREFIX = 'service:#';

export interface MediaUrlSigner {
  /** The signed, expiring access URL of the media reference `ref`. */
  sign(ref: string, nowMs?: number): string;
  /** `json` with every string that is a media reference, whole, replaced by its signed URL. */
  signAll(json: RawJson, nowMs?: number): RawJson;
}

/**
 * URLs are `template` with `{hash}` replaced, plus `expires` (Unix seconds) and `signature`
 * (base64url HMAC-SHA256 of `<hash>:<expires>` under `secret`), so a media host that shares the
 * secret can check them. Without a configured secret, one is drawn for this process.
 */
export function createMediaUrlSigner(template: string, secret: string | undefined): MediaUrlSigner {
  const key = secret ?? randomBytes(32).toString('base64url');

  function sign(ref: string, nowMs = Date.now()): string {
    const hash = ref.slice(PREFIX.length);
    const expires = Math.floor(nowMs / 1000) + MEDIA_URL_TTL_SECONDS;
    const signature = createHmac('sha256', key).update(`${hash}:${expires}`).digest('base64url');
    const base = template.replaceAll('{hash}', encodeURIComponent(hash));
    return `${base}${base.includes('?') ? '&' : '?'}expires=${expires}&signature=${signature}`;
  }

  return {
    sign,
    signAll(json, nowMs = Date.now()) {
      // Most answers hold no reference at all: they are sent as they are, without a parse.
      if (!json.includes(PREFIX)) return json;
      const signed: unknown = JSON.parse(json, (_key, value: unknown) =>
        typeof value === 'string' && MEDIA_REF.test(value) ? sign(value, nowMs) : value,
      );
      return JSON.stringify(signed) as RawJson;
    },
  };
}
