/**
 * Where the benchmark's files are: bench/, and the repository's root (the working directory of
 * every process it starts).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const benchDir = path.dirname(fileURLToPath(import.meta.url));
export const rootDir = path.resolve(benchDir, '..');
