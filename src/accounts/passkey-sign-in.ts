import type { PasskeyService } from './passkeys.js';
import type { Account } from './service.js';
import type { Counter, Throttle } from './throttle.js';

/**
 * Signing in with a passkey, throttled as a password is (src/accounts/password-sign-in.ts), by
 * the client address alone: there is no email to count. The attempt is counted before the
 * answer is checked; a refusal (PasskeyRefused: 400, or 401 for a passkey no account has) leaves
 * it counted, a success takes it back.
 */
export async function signInWithPasskey(
  passkeys: PasskeyService,
  throttle: Throttle,
  attempt: { interaction: string; response: unknown; address: string },
): Promise<{ account: Account } | { waitSeconds: number }> {
  const byAddress: Counter = { rule: 'signInAddress', subject: attempt.address };
  const wait = await throttle.take([byAddress]);
  if (wait > 0) return { waitSeconds: wait };
  const account = await passkeys.authenticate(attempt.interaction, attempt.response);
  await throttle.uncount(byAddress);
  return { account };
}
