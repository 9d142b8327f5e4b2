import { createHash } from 'node:crypto';
import { pipeline, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';

export interface ArchiveEntry {
  name: string;
  size: number;
  /** The entry's bytes: read them whole (readAll, hashOf) before asking for the next entry. */
  body: Readable;
}

/**
 * The entries of a gzipped tar, one at a time, as they stream in (nothing is held but the
 * entry being read). Gzip or tar damage, a truncated file included, ends the iteration with
 * the decoder's error.
 */
export async function* readEntries(source: Readable): AsyncGenerator<ArchiveEntry> {
  const extract = tar.extract();
  let current: { entry: ArchiveEntry; next: () => void } | undefined;
  let failure: Error | undefined;
  let finished = false;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  extract.on('entry', (header, body, next) => {
    current = { entry: { name: header.name, size: header.size ?? 0, body }, next: () => next() };
    notify();
  });
  extract.on('finish', () => {
    finished = true;
    notify();
  });
  pipeline(source, createGunzip(), extract, (err) => {
    if (err) failure ??= err;
    finished = true;
    notify();
  });
  try {
    for (;;) {
      if (!current && !failure && !finished) await new Promise<void>((resolve) => (wake = resolve));
      if (failure) throw failure;
      if (current) {
        const { entry, next } = current;
        current = undefined;
        yield entry;
        next();
        continue;
      }
      if (finished) return;
    }
  } finally {
    source.destroy();
  }
}

/** An entry is larger than its reader takes: the rest of it is not read. */
export class EntryTooLarge extends Error {}

/**
 * The whole body of an entry, of at most `maxBytes`; rejects if the archive breaks off inside
 * it, and with EntryTooLarge as soon as more arrives (a tar header states the size, which the
 * caller checks first: this bounds what is held whatever the header says).
 */
export function readAll(body: Readable, maxBytes: number): Promise<Buffer> {
  return consume(body, () => {
    const chunks: Buffer[] = [];
    let size = 0;
    return {
      add: (chunk) => {
        size += chunk.length;
        if (size > maxBytes) throw new EntryTooLarge(`it is larger than ${maxBytes} bytes`);
        chunks.push(chunk);
      },
      end: () => Buffer.concat(chunks),
    };
  });
}

/** The SHA-256 (hex) and size of an entry's body, read through, and its first `startBytes` bytes. */
export function hashOf(body: Readable, startBytes = 0): Promise<{ sha256: string; size: number; start: Buffer }> {
  return consume(body, () => {
    const hash = createHash('sha256');
    let size = 0;
    const start: Buffer[] = [];
    return {
      add: (chunk) => {
        if (size < startBytes) start.push(chunk.subarray(0, startBytes - size));
        size += chunk.length;
        hash.update(chunk);
      },
      end: () => ({ sha256: hash.digest('hex'), size, start: Buffer.concat(start) }),
    };
  });
}

function consume<T>(body: Readable, sink: () => { add(chunk: Buffer): void; end(): T }): Promise<T> {
  return new Promise((resolve, reject) => {
    const s = sink();
    let ended = false;
    body.on('data', (chunk: Buffer) => {
      try {
        s.add(chunk);
      } catch (err) {
        ended = true;
        body.destroy();
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    body.once('end', () => {
      ended = true;
      resolve(s.end());
    });
    body.once('error', reject);
    // tar-stream closes an entry's stream without ending it when the archive breaks off.
    body.once('close', () => {
      if (!ended) reject(new Error('the archive ends inside an entry'));
    });
  });
}
