import { createReadStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { SHA256_HEX, type MediaStore, type StagedObject } from './media-store.js';
import { stageToFile, sweepDir } from './staging.js';

/**
 * The embedded media store: files under `<dir>/objects/<first two hex digits>/<sha256>`.
 * Bytes are staged in `<dir>/staging` (the same file system, so a commit is an atomic rename:
 * a reader never sees half an object, and a crash leaves at most a staging file behind).
 */
export function createFsMediaStore(dir: string): MediaStore {
  const objectsDir = path.join(dir, 'objects');
  const stagingDir = path.join(dir, 'staging');

  function objectPath(sha256: string): string {
    // Names come from our own hashing or from validated input; this keeps them inside the store.
    if (!SHA256_HEX.test(sha256)) throw new Error(`not a SHA-256 hex digest: ${sha256}`);
    return path.join(objectsDir, sha256.slice(0, 2), sha256);
  }

  return {
    async stage(body, maxBytes) {
      const { path: tempPath, sha256, size } = await stageToFile(stagingDir, body, maxBytes);
      let settled = false;
      const staged: StagedObject = {
        sha256,
        size,
        path: tempPath,
        async commit() {
          if (settled) return;
          const target = objectPath(sha256);
          await mkdir(path.dirname(target), { recursive: true });
          // Same name, same bytes: replacing an existing copy is harmless and atomic.
          await rename(tempPath, target);
          settled = true;
        },
        async discard() {
          if (settled) return;
          settled = true;
          await rm(tempPath, { force: true });
        },
      };
      return staged;
    },

    async stat(sha256) {
      try {
        const s = await stat(objectPath(sha256));
        return { size: s.size };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },

    read(sha256, range) {
      return createReadStream(objectPath(sha256), range ? { start: range.start, end: range.end } : {});
    },

    async localPath(sha256) {
      return objectPath(sha256);
    },

    async remove(sha256) {
      await rm(objectPath(sha256), { force: true });
    },

    async *list() {
      for (const prefix of await readdir(objectsDir).catch(() => [] as string[])) {
        for (const name of await readdir(path.join(objectsDir, prefix)).catch(() => [] as string[])) {
          if (!SHA256_HEX.test(name)) continue;
          const s = await stat(path.join(objectsDir, prefix, name)).catch(() => undefined);
          if (s) yield { sha256: name, storedAtMs: s.mtimeMs };
        }
      }
    },

    sweepStaging: (beforeMs) => sweepDir(stagingDir, beforeMs),
  };
}
