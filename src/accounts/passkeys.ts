import { isIP } from 'node:net';
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { PasskeysTable } from '../db/database.js';
import type { Store } from '../db/dialect.js';
import { AppError } from '../shared/errors.js';
import * as repo from './passkeys-repository.js';
import type { Account, AccountService } from './service.js';

/**
 * Passkeys (WebAuthn, through @simplewebauthn/server): a second way to sign in, beside the
 * password. An account adds them while signed in to the account page; an app's sign-in page
 * signs in with one alone (a discoverable credential: the browser offers the passkeys it holds
 * for this site, so no email is asked).
 *
 * The relying party is the configured public base URL: its host name is the RP id and its
 * origin the only origin accepted. Every challenge is kept in the database (any instance can
 * verify the answer), bound to what asked for it (the account registering, or the sign-in
 * interaction), good for CHALLENGE_TTL_MS and deleted when used.
 */

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;
export const MAX_PASSKEYS = 20;
const MAX_NAME_LENGTH = 100;
const RP_NAME = 'Cardshelf';

type Purpose = 'registration' | 'authentication';

/**
 * Why a passkey was refused, in the interface's error shape: 401 when no account has this
 * passkey (`unknown`), 400 when the answer was bad. The message is fit for the person holding it.
 */
export class PasskeyRefused extends AppError {
  constructor(message: string, reason: 'bad' | 'unknown' = 'bad') {
    super(reason === 'unknown' ? 'unauthorized' : 'bad-request', message);
  }
}

/** A database error met within the library's checks, passed on as it is (not as a refusal). */
class StoreFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('the store failed');
  }
}

const NEEDS_A_DOMAIN = 'passkeys work only when this server is reached by a domain name (PUBLIC_BASE_URL), not an IP address';

export interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | undefined;
}

export interface PasskeyService {
  /**
   * False when the public base URL names an IP address: WebAuthn takes a domain as RP id only,
   * so the pages do not offer passkeys there (http://localhost works, http://127.0.0.1 does not).
   */
  readonly available: boolean;
  /** Options for the browser to make a passkey for `account`; the challenge is bound to it. */
  registrationOptions(account: Account): Promise<PublicKeyCredentialCreationOptionsJSON>;
  /** Checks the browser's answer and keeps the passkey under `name`. Throws PasskeyRefused. */
  register(account: Account, response: unknown, name: string): Promise<Passkey>;
  /** Options for signing in within `interaction` (any passkey of this site). */
  authenticationOptions(interaction: string): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /** Checks the browser's answer within `interaction`; answers the (active) account. Throws PasskeyRefused. */
  authenticate(interaction: string, response: unknown): Promise<Account>;
  list(userId: string): Promise<Passkey[]>;
  /** Removes one of `userId`'s passkeys; false when it has none by that id. */
  remove(userId: string, id: string): Promise<boolean>;
}

/** The relying party a public base URL makes: its host name (a domain, not an IP address) and origin. */
export function relyingParty(publicBaseUrl: string): { id: string; origin: string } {
  const url = new URL(publicBaseUrl);
  return { id: url.hostname, origin: url.origin };
}

/**
 * @simplewebauthn/server, loaded on the first passkey request: with the certificate parsers it
 * brings (@peculiar/*) it is about 250 modules and 120 ms of a process's start, which most
 * processes (commands, workers, instances where nobody uses a passkey) never need.
 */
let webauthn: Promise<typeof import('@simplewebauthn/server')> | undefined;
const library = (): Promise<typeof import('@simplewebauthn/server')> => (webauthn ??= import('@simplewebauthn/server'));

const toPasskey = (row: PasskeysTable): Passkey => ({ id: row.id, name: row.name, createdAt: row.created_at, lastUsedAt: row.last_used_at ?? undefined });

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export function createPasskeyService(store: Store, accounts: AccountService, publicBaseUrl: string, now: () => number = Date.now): PasskeyService {
  const { db } = store;
  const rp = relyingParty(publicBaseUrl);

  async function remember(purpose: Purpose, subject: string, challenge: string): Promise<void> {
    await repo.insertChallenge(db, { challenge, purpose, subject, expires_at: new Date(now() + CHALLENGE_TTL_MS).toISOString() });
  }

  /** True when `challenge` was handed out for this purpose and subject and is still good; it is used up. */
  async function useUp(purpose: Purpose, subject: string, challenge: string): Promise<boolean> {
    try {
      return await repo.deleteGoodChallenge(db, { challenge, purpose, subject }, new Date(now()).toISOString());
    } catch (err) {
      throw new StoreFailed(err);
    }
  }

  /** The library's checks throw on any mismatch; each becomes a refusal that says what was wrong. */
  async function checked<T>(verify: () => Promise<T>): Promise<T> {
    try {
      return await verify();
    } catch (err) {
      if (err instanceof PasskeyRefused) throw err;
      // The database failing (called from within the library's checks) is no fault of the answer.
      if (err instanceof StoreFailed) throw err.cause;
      const message = err instanceof Error ? err.message : String(err);
      throw new PasskeyRefused(/challenge/i.test(message) ? 'this passkey request has expired or was not made here; try again' : `the passkey's answer was refused: ${message}`);
    }
  }

  const shapeOf = (response: unknown): void => {
    if (!isObject(response) || typeof response.id !== 'string' || !isObject(response.response)) {
      throw new PasskeyRefused('the passkey answer is missing or not a WebAuthn credential');
    }
  };

  const available = isIP(rp.id.replace(/^\[|\]$/g, '')) === 0;
  const needsDomain = (): void => {
    if (!available) throw new PasskeyRefused(NEEDS_A_DOMAIN);
  };

  return {
    available,

    async registrationOptions(account) {
      needsDomain();
      const { generateRegistrationOptions } = await library();
      const existing = await repo.credentialsOf(db, account.userId);
      const options = await generateRegistrationOptions({
        rpName: RP_NAME,
        rpID: rp.id,
        userName: account.email,
        userDisplayName: account.displayName,
        // The user handle a discoverable passkey gives back; the account is found by the credential id.
        userID: new TextEncoder().encode(account.userId),
        attestationType: 'none',
        excludeCredentials: existing.map((row) => ({ id: row.id, transports: JSON.parse(row.transports) as AuthenticatorTransport[] })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      });
      await remember('registration', account.userId, options.challenge);
      return options;
    },

    async register(account, response, name) {
      shapeOf(response);
      const label = name.trim().slice(0, MAX_NAME_LENGTH) || 'Passkey';
      if ((await repo.countPasskeys(db, account.userId)) >= MAX_PASSKEYS) throw new PasskeyRefused(`an account holds at most ${MAX_PASSKEYS} passkeys; remove one first`);
      const { verifyRegistrationResponse } = await library();
      const verified = await checked(() =>
        verifyRegistrationResponse({
          response: response as RegistrationResponseJSON,
          expectedChallenge: (challenge) => useUp('registration', account.userId, challenge),
          expectedOrigin: rp.origin,
          expectedRPID: rp.id,
          requireUserVerification: true,
        }),
      );
      if (!verified.verified) throw new PasskeyRefused('the passkey could not be verified');
      const { credential } = verified.registrationInfo;
      const row: PasskeysTable = {
        id: credential.id,
        user_id: account.userId,
        public_key: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: JSON.stringify(credential.transports ?? []),
        name: label,
        created_at: new Date(now()).toISOString(),
        last_used_at: null,
      };
      if (!(await repo.insertPasskey(db, row))) throw new PasskeyRefused('this passkey is already registered');
      return toPasskey(row);
    },

    async authenticationOptions(interaction) {
      needsDomain();
      const { generateAuthenticationOptions } = await library();
      const options = await generateAuthenticationOptions({ rpID: rp.id, userVerification: 'required' });
      await remember('authentication', interaction, options.challenge);
      return options;
    },

    async authenticate(interaction, response) {
      shapeOf(response);
      const { id } = response as AuthenticationResponseJSON;
      const row = await repo.findPasskey(db, id);
      if (!row) throw new PasskeyRefused('this passkey is not registered with this Cardshelf', 'unknown');
      const { verifyAuthenticationResponse } = await library();
      const verified = await checked(() =>
        verifyAuthenticationResponse({
          response: response as AuthenticationResponseJSON,
          expectedChallenge: (challenge) => useUp('authentication', interaction, challenge),
          expectedOrigin: rp.origin,
          expectedRPID: rp.id,
          credential: {
            id: row.id,
            publicKey: Buffer.from(row.public_key, 'base64url'),
            counter: Number(row.counter),
            transports: JSON.parse(row.transports) as AuthenticatorTransport[],
          },
          requireUserVerification: true,
        }),
      );
      if (!verified.verified) throw new PasskeyRefused('the passkey could not be verified');
      const account = await accounts.active(row.user_id);
      if (!account) throw new PasskeyRefused('this passkey is not registered with this Cardshelf', 'unknown');
      await repo.markPasskeyUsed(db, row.id, verified.authenticationInfo.newCounter, new Date(now()).toISOString());
      return account;
    },

    async list(userId) {
      return (await repo.listPasskeys(db, userId)).map(toPasskey);
    },

    async remove(userId, id) {
      return repo.deletePasskey(db, userId, id);
    },
  };
}

/** Removes challenges past their time. */
export async function sweepPasskeyChallenges(store: Store, now = Date.now()): Promise<number> {
  return repo.deleteExpiredChallenges(store.db, new Date(now).toISOString());
}

