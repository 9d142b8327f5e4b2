import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, generateApiTypes } from '../../scripts/gen-api-types.js';

/**
 * The web app's API types (web/src/api-types.ts) are generated from the server's own OpenAPI
 * document: a route or schema changed without `npm run gen:api` fails here, and so in CI.
 */
describe('the web app API types', () => {
  it('are what `npm run gen:api` generates from the current OpenAPI document', { timeout: 60_000 }, async () => {
    const committed = await readFile(API_TYPES_FILE, 'utf8');
    const fresh = await generateApiTypes();
    // One message rather than a 3,000-line diff: what to run.
    expect(committed === fresh, 'web/src/api-types.ts is out of date: run `npm run gen:api` and commit it').toBe(true);
  });
});
