import { nanoid } from 'nanoid';
import type { AccountRow } from '../db/database.js';
import type { Store } from '../db/dialect.js';
import { inUnitOfWork } from '../db/unit-of-work.js';
import { publish } from '../modules/events/publish.js';
import { ACCOUNT_DISABLED } from '../modules/events/revocations.js';
import { accountRevocation, announceRevocations, recordRevocations } from '../auth/revocations.js';
import { MAX_SUBJECT_LENGTH } from '../auth/verifier.js';
import { endSignInsOf } from '../oauth/grants.js';
import { deleteSessionsOf } from './account-sessions-repository.js';
import { checkPassword, hashPassword, newPasswordProblem } from './passwords.js';
import * as repo from './repository.js';

/** The rules of accounts: who may be added, how one signs in, what one can be asked for. */

/** Why an account could not be added or changed; the message is fit for the operator or the user. */
export class AccountRefused extends Error {}

/** The email has an account already: the operator is told so; the account forms do not tell (docs/api.md). */
export class EmailTaken extends AccountRefused {}

export interface Account {
  userId: string;
  email: string;
  displayName: string;
  owner: boolean;
  disabled: boolean;
  hasPassword: boolean;
  createdAt: string;
}

export interface NewAccount {
  email: string;
  displayName: string;
  password?: string;
  owner?: boolean;
  /** Claim an existing user id (one tokens already carry, such as `auth0|...`); default: a new one. */
  userId?: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const MAX_EMAIL_LENGTH = 254;
const MAX_NAME_LENGTH = 200;

/** Emails compare without regard to case: `Ann@Example.com` and `ann@example.com` are one account. */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

/** Refuses a new password the rules of src/accounts/passwords.ts refuse; `context`: the account's email and name. */
export function checkNewPassword(password: string, context: string[]): void {
  const problem = newPasswordProblem(password, context);
  if (problem !== undefined) throw new AccountRefused(problem);
}

function toAccount(row: AccountRow): Account {
  return {
    userId: row.user_id,
    email: row.email,
    displayName: row.display_name,
    owner: row.owner === 1,
    disabled: row.disabled === 1,
    hasPassword: row.password_hash !== null,
    createdAt: row.created_at,
  };
}

export interface AccountService {
  add(input: NewAccount): Promise<Account>;
  list(): Promise<Account[]>;
  /** By email (any case) or user id. */
  find(emailOrUserId: string): Promise<Account | undefined>;
  /** The account a token's `sub` names, when it may still act (not disabled). */
  active(userId: string): Promise<Account | undefined>;
  /** Whether the user id has an account, and it is disabled (a `sub` without an account is not). */
  isDisabled(userId: string): Promise<boolean>;
  /**
   * Disabling also signs the account out everywhere (`signOutEverywhere`) and ends its event
   * streams on every instance (an event of the log).
   */
  setDisabled(emailOrUserId: string, disabled: boolean): Promise<Account>;
  /** Takes back an account just made (an invitation lost a race); nothing else refers to it yet. */
  remove(userId: string): Promise<void>;
  /** Also signs the account out everywhere (`signOutEverywhere`). */
  resetPassword(emailOrUserId: string, password: string): Promise<Account>;
  /**
   * The account these credentials open, or undefined, taking as long whether or not the email has
   * an account, so the answer does not tell which emails are known.
   */
  authenticate(email: string, password: string): Promise<Account | undefined>;
}

export function createAccountService(store: Store): AccountService {
  const { db } = store;
  const rowOf = async (key: string): Promise<AccountRow | undefined> =>
    (await repo.findByUserId(db, key)) ?? (await repo.findByEmailKey(db, emailKey(key)));

  const existing = async (key: string): Promise<AccountRow> => {
    const row = await rowOf(key);
    if (!row) throw new AccountRefused(`there is no account ${key}`);
    return row;
  };

  /**
   * Changes an account and, in the same transaction, ends its sign-ins (grants, refresh tokens,
   * the engine's browser sessions, the account page's sessions) and revokes its grants' access tokens and every token of its
   * user id issued in an earlier second, on every instance (src/auth/revocations.ts): after a
   * disable or a password reset, nothing issued before it still works.
   */
  const signOutEverywhere = async (userId: string, fields: Parameters<typeof repo.updateAccount>[2], opts: { endStreams?: boolean } = {}): Promise<void> => {
    const revoked = await inUnitOfWork(store, [], async (trx) => {
      await repo.updateAccount(trx, userId, fields);
      const grants = await endSignInsOf(trx, store, userId);
      // Whoever has the account page open is signed out of it too (row 14).
      await deleteSessionsOf(trx, userId);
      const account = accountRevocation(userId);
      await recordRevocations(trx, store.dialect, [account]);
      // The command line reaches the servers through the database only: the log tells them. (A
      // reset needs no event: the streams' heartbeat check sees the revocation.)
      if (opts.endStreams) await publish(trx, store.dialect, { kind: ACCOUNT_DISABLED, audience: { userId }, ids: { userId } });
      return [...grants, account];
    });
    announceRevocations(store, revoked);
  };

  return {
    async add(input) {
      const email = input.email.trim();
      if (!EMAIL.test(email) || email.length > MAX_EMAIL_LENGTH) throw new AccountRefused(`'${input.email}' is not an email address`);
      const displayName = input.displayName.trim();
      if (!displayName || displayName.length > MAX_NAME_LENGTH) throw new AccountRefused(`a name is 1 to ${MAX_NAME_LENGTH} characters`);
      const userId = input.userId ?? `cardshelf|${nanoid(16)}`;
      if (!userId || userId.length > MAX_SUBJECT_LENGTH) throw new AccountRefused(`a user id is 1 to ${MAX_SUBJECT_LENGTH} characters`);
      if (input.password !== undefined) checkNewPassword(input.password, [email, displayName]);
      const now = new Date().toISOString();
      const row: AccountRow = {
        user_id: userId,
        email,
        email_key: emailKey(email),
        display_name: displayName,
        password_hash: input.password === undefined ? null : await hashPassword(input.password),
        owner: input.owner ? 1 : 0,
        disabled: 0,
        created_at: now,
        updated_at: now,
      };
      // The unique keys decide between racing adds; the question below only names the reason.
      if (!(await repo.insertAccount(db, row))) {
        if (await repo.findByUserId(db, userId)) throw new AccountRefused(`the user id ${userId} has an account already`);
        throw new EmailTaken(`${email} has an account already`);
      }
      return toAccount(row);
    },
    async list() {
      return (await repo.listAccounts(db)).map(toAccount);
    },
    async find(key) {
      const row = await rowOf(key);
      return row && toAccount(row);
    },
    async active(userId) {
      const row = await repo.findByUserId(db, userId);
      return row && row.disabled === 0 ? toAccount(row) : undefined;
    },
    async isDisabled(userId) {
      return (await repo.findByUserId(db, userId))?.disabled === 1;
    },
    async setDisabled(key, disabled) {
      const row = await existing(key);
      const fields = { disabled: disabled ? 1 : 0, updated_at: new Date().toISOString() } as const;
      if (disabled) await signOutEverywhere(row.user_id, fields, { endStreams: true });
      else await repo.updateAccount(db, row.user_id, fields);
      return toAccount({ ...row, disabled: fields.disabled });
    },
    async remove(userId) {
      await repo.deleteAccount(db, userId);
    },
    async resetPassword(key, password) {
      const row = await existing(key);
      checkNewPassword(password, [row.email, row.display_name]);
      const password_hash = await hashPassword(password);
      await signOutEverywhere(row.user_id, { password_hash, updated_at: new Date().toISOString() });
      return toAccount({ ...row, password_hash });
    },
    async authenticate(email, password) {
      const row = await repo.findByEmailKey(db, emailKey(email));
      const ok = await checkPassword(row?.password_hash, password);
      return ok && row && row.disabled === 0 ? toAccount(row) : undefined;
    },
  };
}
