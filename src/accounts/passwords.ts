import { hash, verify } from '@node-rs/argon2';
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { adjacencyGraphs, dictionary } from '@zxcvbn-ts/language-common';

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

/**
 * The least zxcvbn score (0 to 4) a new password needs. 3 is "safely unguessable" (about 10^8
 * guesses or more): with the list below it refuses the common and breached passwords, those
 * words with a few digits or substitutions (`P@ssw0rd123`), repeats (`aaaaaaaaaa`), runs
 * (`abcdefghij`) and keyboard walks (`qwertyuiop`), as NIST SP 800-63B and ASVS V2.1.7 ask.
 */
export const MIN_PASSWORD_SCORE = 3;

export const PASSWORD_TOO_EASY =
  'this password is too common or too easy to guess (a known password, a word with a few digits, a repeat, a run or a keyboard row); choose a longer one, such as a few unrelated words';

/**
 * zxcvbn-ts with its common-language data: about 49,000 of the most common passwords from
 * breach corpora and 7,776 diceware words, shipped in the package, so nothing is fetched at run
 * time. Built on first use (about 150 ms): most processes never set a password.
 */
let estimator: ZxcvbnFactory | undefined;

/**
 * Why `password` cannot be a new password, or undefined when it can. `context`: the account's
 * own words (email, name), which make a password easy to guess for whoever knows them.
 */
export function newPasswordProblem(password: string, context: string[] = []): string | undefined {
  if ([...password].length < MIN_PASSWORD_LENGTH) return `a password is at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `a password is at most ${MAX_PASSWORD_LENGTH} characters`;
  estimator ??= new ZxcvbnFactory({ dictionary, graphs: adjacencyGraphs });
  // zxcvbn's matching grows with the length; past a few hundred characters no password is weak.
  // zxcvbn matches its inputs as whole words: `ann.lee@example.com` gives `ann`, `lee` and `example` too.
  const words = context.flatMap((text) => [text, ...text.split(/[^\p{L}\p{N}]+/u)]).filter((word) => word.length >= 3);
  if (estimator.check(password.slice(0, 256), words).score < MIN_PASSWORD_SCORE) return PASSWORD_TOO_EASY;
  return undefined;
}

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
