import { LRUCache } from 'lru-cache';
import type { Principal } from './principal.js';

/**
 * Verified tokens, by their exact text. A signature check costs far more than the rest of a
 * request (Ed25519 verifies at a few thousand a second per core), and a client sends the same
 * token with every request until it expires. The same text means the same signature and claims,
 * so a hit is as good as a verification until the token's `exp` (re-checked on every get
 * through the entry's TTL), capped at `maxAgeMs` so that a key an issuer withdraws stops
 * working soon after.
 */
export class TokenCache {
  private readonly cache: LRUCache<string, Principal>;

  constructor(
    private readonly maxAgeMs = 5 * 60_000,
    maxEntries = 10_000,
  ) {
    this.cache = new LRUCache<string, Principal>({ max: maxEntries, ttlAutopurge: false });
  }

  get(token: string): Principal | undefined {
    return this.cache.get(token);
  }

  /** Remembers a verified token until `expSeconds` (its `exp` claim), if it has one. */
  set(token: string, principal: Principal, expSeconds: number | undefined): void {
    const untilExp = expSeconds === undefined ? this.maxAgeMs : expSeconds * 1000 - Date.now();
    const ttl = Math.min(untilExp, this.maxAgeMs);
    if (ttl > 0) this.cache.set(token, principal, { ttl });
  }
}
