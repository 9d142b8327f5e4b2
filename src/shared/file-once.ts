import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Creates `file` with `contents` (mode 0600) unless it exists, atomically: written beside it
 * and linked into place, so that processes starting together (the workers of `serve --workers`,
 * instances sharing a data directory) never see a half-written file, and the first writer wins.
 * Callers read the file afterwards, whoever wrote it.
 */
export async function createFileOnce(file: string, contents: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await fs.writeFile(tmp, contents, { mode: 0o600 });
  try {
    await fs.link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await fs.rm(tmp, { force: true });
  }
}
