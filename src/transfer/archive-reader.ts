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

/** The whole body of an entry; rejects if the archive breaks off inside it. */
export function readAll(body: Readable): Promise<Buffer> {
  return consume(body, () => {
    const chunks: Buffer[] = [];
    return { add: (chunk) => chunks.push(chunk), end: () => Buffer.concat(chunks) };
  });
}

/** The SHA-256 (hex) and size of an entry's body, read through. */
export function hashOf(body: Readable): Promise<{ sha256: string; size: number }> {
  return consume(body, () => {
    const hash = createHash('sha256');
    let size = 0;
    return {
      add: (chunk) => {
        size += chunk.length;
        hash.update(chunk);
      },
      end: () => ({ sha256: hash.digest('hex'), size }),
    };
  });
}

function consume<T>(body: Readable, sink: () => { add(chunk: Buffer): void; end(): T }): Promise<T> {
  return new Promise((resolve, reject) => {
    const s = sink();
    let ended = false;
    body.on('data', (chunk: Buffer) => s.add(chunk));
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
