/**
 * Writes the OpenAPI document the server serves at /openapi.json to a file (default
 * openapi.json), for `redocly lint` in CI.
 */
import { writeFile } from 'node:fs/promises';
import { readApiDocument } from './api-document.js';

const out = process.argv[2] ?? 'openapi.json';
await writeFile(out, `${JSON.stringify(await readApiDocument(), null, 2)}\n`);
process.stderr.write(`wrote ${out}\n`);
