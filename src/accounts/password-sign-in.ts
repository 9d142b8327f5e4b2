import type { Account, AccountService } from './service.js';
import type { Counter, Throttle } from './throttle.js';

export type PasswordSignIn = { account: Account } | { waitSeconds: number } | { wrong: true };

/**
 * Signing in with an email and a password, throttled (src/accounts/throttle.ts): the one rule
 * for every form that takes a password (the sign-in page of an app's sign-in, the account page).
 * The attempt is counted before the password is checked, so a burst of guesses is throttled as
 * it arrives; the email is counted whether or not it has an account, and the answers are the same.
 */
export async function signInWithPassword(
  accounts: AccountService,
  throttle: Throttle,
  attempt: { email: string; password: string; address: string },
): Promise<PasswordSignIn> {
  const byEmail: Counter = { rule: 'signInEmail', subject: attempt.email };
  const byAddress: Counter = { rule: 'signInAddress', subject: attempt.address };
  const wait = await throttle.take([byEmail, byAddress]);
  if (wait > 0) return { waitSeconds: wait };
  const account = await accounts.authenticate(attempt.email, attempt.password);
  if (!account) return { wrong: true };
  await throttle.clear(byEmail);
  await throttle.uncount(byAddress);
  return { account };
}

/** The one message for a wrong password and an unknown email. */
export const WRONG_PASSWORD = 'That email and password do not match an account.';
