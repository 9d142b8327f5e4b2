import { hash, verify } from '@node-rs/argon2';

/** `Algorithm.Argon2id`: the package's enum is a `const enum`, which isolated modules cannot import. */
const ARGON2ID = 2;

/**
 * Passwords are kept as argon2id hashes (RFC 9106), in the PHC string form that carries its own
 * parameters, so they can be raised later without breaking stored hashes. These are OWASP's
 * minimum for argon2id (19 MiB, 2 passes, 1 lane).
 */
const PARAMS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 1024;

export function hashPassword(password: string): Promise<string> {
  return hash(password, PARAMS);
}

/** A hash of nothing anyone knows: checked when no account matches, so both answers take as long. */
let decoy: Promise<string> | undefined;

/** True when `password` matches `stored`; with no stored hash, spends the same time and says false. */
export async function checkPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (!stored) {
    decoy ??= hashPassword(`decoy-${Math.random()}`);
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
