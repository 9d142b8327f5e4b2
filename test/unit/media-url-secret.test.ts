import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/auth/config.js';
import { MEDIA_URL_SECRET_FILE, sharedMediaUrlSecret } from '../../src/auth/media-url-secret.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cardshelf-secret-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const local = (keyFile: string): AuthConfig => ({ mode: 'local', issuer: 'i', audience: 'a', keyFile, signInIssuer: 'http://localhost:3000' });
const oidc: AuthConfig = { mode: 'oidc', issuer: 'https://id.example', audience: 'a', jwksUrl: 'https://id.example/jwks' };

describe('the media URL secret when MEDIA_URL_SECRET is unset', () => {
  it('is derived from the local signing key: the same key gives the same secret anywhere, another key another', async () => {
    const keyFile = path.join(dir, 'key.json');
    const first = await sharedMediaUrlSecret(local(keyFile), path.join(dir, 'a'));
    const again = await sharedMediaUrlSecret(local(keyFile), path.join(dir, 'b'));
    const other = await sharedMediaUrlSecret(local(path.join(dir, 'other.json')), path.join(dir, 'a'));
    expect(first).toHaveLength(43);
    expect(again).toBe(first);
    expect(other).not.toBe(first);
    // Derived, not the key itself.
    expect(await readFile(keyFile, 'utf8')).not.toContain(first);
  });

  it('with an external issuer, is drawn once and kept in DATA_DIR, and processes starting together agree', async () => {
    const secrets = await Promise.all(Array.from({ length: 8 }, () => sharedMediaUrlSecret(oidc, dir)));
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0]!.length).toBeGreaterThanOrEqual(32);
    const file = path.join(dir, MEDIA_URL_SECRET_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await sharedMediaUrlSecret(oidc, dir)).toBe(secrets[0]);
    await rm(file);
    expect(await sharedMediaUrlSecret(oidc, dir)).not.toBe(secrets[0]);
  });
});
