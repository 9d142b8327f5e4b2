import { readFileSync } from 'node:fs';

/** Cardshelf's version, from package.json (two levels up from both src/shared and dist/shared). */
export const CARDSHELF_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
