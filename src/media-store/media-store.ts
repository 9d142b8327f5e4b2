import type { Readable } from 'node:stream';

/**
 * Where media bytes live: content-addressed objects named by the SHA-256 of their bytes (hex).
 * An object is written whole or not at all: bytes are staged first (hashed and counted on the
 * way, never held whole in memory), checked by the caller, then committed under their hash or
 * discarded. Committing bytes that are already stored keeps one copy.
 */
export interface MediaStore {
  /**
   * Streams `body` to a staging area. Rejects with `ObjectTooLarge` once more than `maxBytes`
   * arrive (nothing is kept), and with the stream's error if it breaks off.
   */
  stage(body: Readable, maxBytes: number): Promise<StagedObject>;
  /** Size of a stored object, or undefined when it is not stored. */
  stat(sha256: string): Promise<{ size: number } | undefined>;
  /** The bytes of a stored object, or of the inclusive byte range `[start, end]` of it. */
  read(sha256: string, range?: { start: number; end: number }): Readable;
  /** A local file holding the object's bytes, for tools that read files (ffmpeg). */
  localPath(sha256: string): Promise<string>;
  remove(sha256: string): Promise<void>;
  /** Every stored object with the time it was stored, for garbage collection. */
  list(): AsyncIterable<{ sha256: string; storedAtMs: number }>;
  /** Removes staged bytes older than `beforeMs` (left by a crash); the number removed. */
  sweepStaging(beforeMs: number): Promise<number>;
}

export interface StagedObject {
  readonly sha256: string;
  readonly size: number;
  /** A local file with the staged bytes, to inspect before committing. */
  readonly path: string;
  /** Stores the bytes under their hash (a no-op copy when they are already stored). */
  commit(): Promise<void>;
  /** Drops the staged bytes. Safe to call after commit, and twice. */
  discard(): Promise<void>;
}

export class ObjectTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`larger than ${maxBytes} bytes`);
    this.name = 'ObjectTooLarge';
  }
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;
