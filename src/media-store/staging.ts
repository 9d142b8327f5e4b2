import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { ObjectTooLarge } from './media-store.js';

/**
 * Streams `body` to a new file in `dir`, hashing (SHA-256) and counting on the way; more than
 * `maxBytes` or a body that breaks off leaves no file behind. Every media store stages this way.
 */
export async function stageToFile(dir: string, body: Readable, maxBytes: number): Promise<{ path: string; sha256: string; size: number }> {
  await mkdir(dir, { recursive: true });
  const tempPath = path.join(dir, `${randomBytes(16).toString('hex')}.part`);
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new ObjectTooLarge(maxBytes));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  // `body` is piped, not part of the pipeline: a body refused midway (too large) is left
  // undestroyed, so that the request it is can still be answered (413) instead of cut off.
  // Its own failure (the client went away, a premature end) fails the staging.
  body.pipe(meter);
  finished(body).catch((err: unknown) => meter.destroy(err as Error));
  try {
    await pipeline(meter, createWriteStream(tempPath, { flags: 'wx' }));
  } catch (err) {
    body.unpipe(meter);
    await rm(tempPath, { force: true });
    throw err;
  }
  return { path: tempPath, sha256: hash.digest('hex'), size };
}

/** Removes staged files older than `beforeMs` (a crash's leftovers); the number removed. */
export async function sweepDir(dir: string, beforeMs: number): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const file = path.join(dir, name);
    const s = await stat(file).catch(() => undefined);
    if (s && s.mtimeMs < beforeMs) {
      await rm(file, { force: true });
      removed += 1;
    }
  }
  return removed;
}
