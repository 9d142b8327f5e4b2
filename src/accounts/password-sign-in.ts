import type { DeviceCookies } from './device-cookies.js';
import type { Account, AccountService } from './service.js';
import type { Counter, Throttle } from './throttle.js';

/** `deviceCookie`: the cookie value to send back, which makes this browser a known device of the email. */
export type PasswordSignIn = { account: Account; deviceCookie: string } | { waitSeconds: number } | { wrong: true };

/**
 * Signing in with an email and a password, throttled (src/accounts/throttle.ts): the one rule
 * for every form that takes a password (the sign-in page of an app's sign-in, the account page).
 * The attempt is counted before the password is checked, so a burst of guesses is throttled as
 * it arrives; the email is counted whether or not it has an account, and the answers are the same.
 *
 * A browser that shows a device cookie for the email (`device`, src/accounts/device-cookies.ts)
 * is counted on that device's own counter instead of the email's: guesses from elsewhere that
 * lock the email do not lock its owner's known browsers, and a known browser that guesses wrong
 * locks only itself. The address is counted either way. Success there leaves the email's counter
 * as it is (the guessing elsewhere goes on being held back).
 */
export async function signInWithPassword(
  accounts: AccountService,
  throttle: Throttle,
  devices: DeviceCookies,
  attempt: { email: string; password: string; address: string; device?: string },
): Promise<PasswordSignIn> {
  const known = devices.deviceFor(attempt.device, attempt.email);
  const byEmail: Counter = known === undefined ? { rule: 'signInEmail', subject: attempt.email } : { rule: 'signInDevice', subject: known };
  const byAddress: Counter = { rule: 'signInAddress', subject: attempt.address };
  const wait = await throttle.take([byEmail, byAddress]);
  if (wait > 0) return { waitSeconds: wait };
  const account = await accounts.authenticate(attempt.email, attempt.password);
  if (!account) return { wrong: true };
  await throttle.clear(byEmail);
  await throttle.uncount(byAddress);
  return { account, deviceCookie: devices.issue(attempt.device, attempt.email) };
}

/** The one message for a wrong password and an unknown email. */
export const WRONG_PASSWORD = 'That email and password do not match an account.';
