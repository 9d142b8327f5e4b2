import { createHash } from 'node:crypto';

/**
 * A set of keys kept as 64-bit hashes, 8 bytes a key (a Set of the strings takes ten times
 * that): the first pass of an import indexes the card ids of a million-card archive in 8 MiB.
 * Keys are added, then the index is sealed (sorted) and asked with `has`. Two different keys
 * share a hash with odds of about n² / 2^65 (1 in 40 million for a million keys): then a
 * duplicate is reported where there is none, or a reference is taken as found.
 */
export class KeyIndex {
  private hashes = new BigUint64Array(256);
  private count = 0;
  private sealed = false;

  add(key: string): void {
    if (this.sealed) throw new Error('the key index is sealed');
    if (this.count === this.hashes.length) {
      const grown = new BigUint64Array(this.hashes.length * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes[this.count++] = hash64(key);
  }

  /** Sorts the index for `has`; answers whether some key was added twice. */
  seal(): boolean {
    if (this.sealed) return false;
    this.sealed = true;
    this.hashes = this.hashes.slice(0, this.count).sort();
    for (let i = 1; i < this.count; i++) if (this.hashes[i] === this.hashes[i - 1]) return true;
    return false;
  }

  has(key: string): boolean {
    if (!this.sealed) throw new Error('the key index is not sealed');
    const wanted = hash64(key);
    let low = 0;
    let high = this.count - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const value = this.hashes[mid]!;
      if (value === wanted) return true;
      if (value < wanted) low = mid + 1;
      else high = mid - 1;
    }
    return false;
  }
}

const hash64 = (key: string): bigint => createHash('sha256').update(key).digest().readBigUInt64BE(0);
