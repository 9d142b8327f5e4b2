import { nanoid } from 'nanoid';
import type { AccountRow } from '../db/database.js';
import type { Store } from '../db/dialect.js';
import { MAX_SUBJECT_LENGTH } from '../auth/verifier.js';
import { checkPassword, hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.js';
import * as repo from './repository.js';
import { endAccountSessions } from './account-sessions.js';

/** The rules of accounts: who may be added, how one signs in, what one can be asked for. */

/** Why an account could not be added or changed; the message is fit for the operator or the user. */
export class AccountRefused extends Error {}

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

export function checkNewPassword(password: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH) throw new AccountRefused(`a password is at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH) throw new AccountRefused(`a password is at most ${MAX_PASSWORD_LENGTH} characters`);
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
  setDisabled(emailOrUserId: string, disabled: boolean): Promise<Account>;
  /** Takes back an account just made (an invitation lost a race); nothing else refers to it yet. */
  remove(userId: string): Promise<void>;
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

  return {
    async add(input) {
      const email = input.email.trim();
      if (!EMAIL.test(email) || email.length > MAX_EMAIL_LENGTH) throw new AccountRefused(`'${input.email}' is not an email address`);
      const displayName = input.displayName.trim();
      if (!displayName || displayName.length > MAX_NAME_LENGTH) throw new AccountRefused(`a name is 1 to ${MAX_NAME_LENGTH} characters`);
      const userId = input.userId ?? `cardshelf|${nanoid(16)}`;
      if (!userId || userId.length > MAX_SUBJECT_LENGTH) throw new AccountRefused(`a user id is 1 to ${MAX_SUBJECT_LENGTH} characters`);
      if (input.password !== undefined) checkNewPassword(input.password);
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
        throw new AccountRefused(`${email} has an account already`);
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
    async setDisabled(key, disabled) {
      const row = await existing(key);
      await repo.updateAccount(db, row.user_id, { disabled: disabled ? 1 : 0, updated_at: new Date().toISOString() });
      // Whoever has the account page open is signed out of it (issue 33, row 14).
      if (disabled) await endAccountSessions(store, row.user_id);
      return toAccount({ ...row, disabled: disabled ? 1 : 0 });
    },
    async remove(userId) {
      await repo.deleteAccount(db, userId);
    },
    async resetPassword(key, password) {
      checkNewPassword(password);
      const row = await existing(key);
      const password_hash = await hashPassword(password);
      await repo.updateAccount(db, row.user_id, { password_hash, updated_at: new Date().toISOString() });
      // A new password ends the account page's sessions, which the old one opened (issue 33, row 14).
      await endAccountSessions(store, row.user_id);
      return toAccount({ ...row, password_hash });
    },
    async authenticate(email, password) {
      const row = await repo.findByEmailKey(db, emailKey(email));
      const ok = await checkPassword(row?.password_hash, password);
      return ok && row && row.disabled === 0 ? toAccount(row) : undefined;
    },
  };
}
