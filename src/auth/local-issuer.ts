import fs from 'node:fs/promises';
import { createFileOnce } from '../shared/file-once.js';
import {
  SignJWT,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type CryptoKey,
} from 'jose';

/** The local issuer's algorithm: Ed25519 signatures are small and quick to verify. */
export const LOCAL_ALG = 'EdDSA';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** The private key's bytes, only for secrets derived from them (HKDF); never sent anywhere. */
  secret: Buffer;
}

interface KeyFile {
  kid: string;
  alg: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

/**
 * Loads the local issuer's key pair from `file`, creating it on first use. Processes that start
 * together race safely: the file is written under a temporary name and linked into place only
 * if no other process got there first; the loser reads the winner's key.
 */
export async function loadOrCreateSigningKey(file: string): Promise<SigningKey> {
  try {
    return await readKeyFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const { privateKey } = await generateKeyPair(LOCAL_ALG, { crv: 'Ed25519', extractable: true });
  const privateJwk = await exportJWK(privateKey);
  const { d: _secret, ...publicJwk } = privateJwk;
  const kid = await calculateJwkThumbprint(publicJwk);
  const body: KeyFile = { kid, alg: LOCAL_ALG, privateJwk: { ...privateJwk, kid }, publicJwk: { ...publicJwk, kid } };
  await createFileOnce(file, JSON.stringify(body, null, 2));
  return readKeyFile(file);
}

async function readKeyFile(file: string): Promise<SigningKey> {
  const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as KeyFile;
  if (parsed.alg !== LOCAL_ALG || !parsed.privateJwk?.d) {
    throw new Error(`${file} is not a Cardshelf signing key`);
  }
  const privateKey = (await importJWK(parsed.privateJwk, LOCAL_ALG)) as CryptoKey;
  return {
    kid: parsed.kid,
    privateKey,
    publicJwk: { ...parsed.publicJwk, alg: LOCAL_ALG, use: 'sig' },
    secret: Buffer.from(parsed.privateJwk.d, 'base64url'),
  };
}

export interface MintOptions {
  sub: string;
  scope?: string;
  /** A duration such as `30s`, `15m`, `2h` or `7d`. */
  expiresIn: string;
  issuer: string;
  audience: string;
  /** The token's id (`jti`), for a credential that can be revoked by it. */
  jti?: string;
  /** Further claims (a player's device id). */
  claims?: Record<string, unknown>;
}

export const DURATION_PATTERN = /^\d+\s*(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days|w|week|weeks)$/;

export async function mintToken(key: SigningKey, opts: MintOptions): Promise<string> {
  if (!DURATION_PATTERN.test(opts.expiresIn)) {
    throw new Error(`expires-in must be a duration such as 30s, 15m, 2h or 7d, not '${opts.expiresIn}'`);
  }
  const claims: Record<string, unknown> = { ...opts.claims };
  if (opts.scope) claims.scope = opts.scope;
  const jwt = new SignJWT(claims);
  if (opts.jti) jwt.setJti(opts.jti);
  return jwt
    // An access token (RFC 9068), as the embedded engine's: the API takes no other from it.
    .setProtectedHeader({ alg: LOCAL_ALG, kid: key.kid, typ: 'at+jwt' })
    .setSubject(opts.sub)
    .setIssuer(opts.issuer)
    .setAudience(opts.audience)
    .setIssuedAt()
    .setExpirationTime(opts.expiresIn)
    .sign(key.privateKey);
}

/** The private key as a JWK, for the embedded sign-in server, which signs with the same key. */
export async function readPrivateJwk(file: string): Promise<JWK> {
  await loadOrCreateSigningKey(file);
  const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as KeyFile;
  return parsed.privateJwk;
}
