import { hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AuthConfig } from './config.js';
import { loadOrCreateSigningKey } from './local-issuer.js';
import { createFileOnce } from '../shared/file-once.js';

/**
 * The HKDF `info` of the media URL secret: it names the one use of the derived bytes, so a
 * secret derived for anything else from the same key can never equal it.
 */
const MEDIA_URL_SECRET_INFO = 'cardshelf media URL secret v1';

/** Where the secret lives when tokens come from an external issuer (no local key to derive it from). */
export const MEDIA_URL_SECRET_FILE = 'media-url-secret';

/**
 * The HMAC secret of signed media and upload URLs when `MEDIA_URL_SECRET` is unset. Every worker
 * of `serve --workers`, every restart, and every instance that shares the signing key must sign
 * alike, or a URL handed out by one is refused by the next:
 * - with the local issuer, it is derived from the signing key (HKDF-SHA256): the key file is the
 *   one thing an operator shares between instances;
 * - with an external issuer there is no local key, so it is drawn once and kept in
 *   `DATA_DIR/media-url-secret` (created atomically, so workers starting together agree);
 *   instances on other hosts must then be given `MEDIA_URL_SECRET`.
 */
export async function sharedMediaUrlSecret(auth: AuthConfig, dataDir: string): Promise<string> {
  if (auth.mode === 'local') {
    const key = await loadOrCreateSigningKey(auth.keyFile);
    return Buffer.from(hkdfSync('sha256', key.secret, Buffer.alloc(0), MEDIA_URL_SECRET_INFO, 32)).toString('base64url');
  }
  return loadOrCreateSecretFile(path.join(dataDir, MEDIA_URL_SECRET_FILE));
}

/**
 * The instance's secret: `MEDIA_URL_SECRET` when set, else the shared one above. Everything of
 * one deployment that signs or seals with it (the servers, the `cardshelf link` commands, which
 * open the linked services' tokens the servers sealed) takes it from here.
 */
export async function instanceSecret(given: string | undefined, auth: AuthConfig, dataDir: string): Promise<string> {
  return given ?? sharedMediaUrlSecret(auth, dataDir);
}

/** Like the signing key: written under a temporary name, linked into place only if absent. */
async function loadOrCreateSecretFile(file: string): Promise<string> {
  try {
    return await readSecretFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await createFileOnce(file, `${randomBytes(32).toString('base64url')}\n`);
  return readSecretFile(file);
}

async function readSecretFile(file: string): Promise<string> {
  const secret = (await fs.readFile(file, 'utf8')).trim();
  if (secret.length < 16) throw new Error(`${file} holds no media URL secret (16 characters or more)`);
  return secret;
}
