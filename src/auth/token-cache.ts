import { LRUCache } from 'lru-cache';
import type { Principal } from './principal.js';

interface Verified {
  principal: Principal;
  /** The token's `exp` in milliseconds; Infinity without one. */
  expiresAtMs: number;
}

/**
 * Verified tokens, by their exact text. A signature check costs far more than the rest of a
 * request (Ed25519 verifies at a few thousand a second per core), and a client sends the same
 * token with every request until it expires. The same text means the same signature and claims,
 * so a hit is as good as a verification until the token's `exp`, capped at `maxAgeMs` so that a
 * key an issuer withdraws stops working soon after.
 */
export class TokenCache {
  private readonly cache: LRUCache<string, Verified>;

  constructor(
    private readonly maxAgeMs = 5 * 60_000,
    maxEntries = 10_000,
  ) {
    this.cache = new LRUCache<string, Verified>({ max: maxEntries, ttlAutopurge: false });
  }

  get(token: string): Principal | undefined {
    const hit = this.cache.get(token);
    // `exp` is a time of the wall clock, as jose checks it (the TTL runs on a monotonic clock):
    // a hit answers as a verification would, even when the wall clock is set.
    return hit && Date.now() < hit.expiresAtMs ? hit.principal : undefined;
  }

  /** Remembers a verified token until `expSeconds` (its `exp` claim), if it has one. */
  set(token: string, principal: Principal, expSeconds: number | undefined): void {
    const expiresAtMs = expSeconds === undefined ? Infinity : expSeconds * 1000;
    const ttl = Math.min(expiresAtMs - Date.now(), this.maxAgeMs);
    if (ttl > 0) this.cache.set(token, { principal, expiresAtMs }, { ttl });
  }
}
