import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '../db/dialect.js';
import type { FamilyService } from '../modules/families/service.js';
import { AccountRefused, type Account, type AccountService } from './service.js';

/**
 * Invitations: a member of a family (its owner or anyone in it) makes a link; whoever opens it
 * may make one account, which joins the inviter's family. A link is good for 7 days and once.
 * Only a SHA-256 of its secret is stored, so the table does not hold working links.
 */

export const INVITATION_TTL_MS = 7 * 86_400_000;

/** Who may make an account (`SIGNUP`): the operator only, invited people, or anyone. */
export type SignupPolicy = 'closed' | 'invite' | 'open';

export interface Invitation {
  /** The secret that goes in the link; not stored. */
  secret: string;
  familyId: string;
  expiresAt: string;
}

export interface NewMember {
  email: string;
  displayName: string;
  password: string;
}

export interface InvitationService {
  /** A new link into the family of `inviterId` (made a stub family first if they have none). */
  create(inviterId: string): Promise<Invitation>;
  /** Whether the link can still be used: known, not used, not expired. */
  usable(secret: string): Promise<boolean>;
  /**
   * Makes the account and adds it to the inviter's family. Refused (AccountRefused) when the link
   * cannot be used or the account cannot be made; the link is spent only when it succeeded.
   */
  accept(secret: string, member: NewMember): Promise<Account>;
  /** `SIGNUP=open`: an account without an invitation, with a family of its own. */
  signUp(member: NewMember): Promise<Account>;
}

const hashOf = (secret: string): string => createHash('sha256').update(secret).digest('base64url');
/** Links carry 32 random bytes: guessing one is out of the question, so no throttle is needed. */
const SECRET = /^[A-Za-z0-9_-]{43}$/;

export const INVITATION_UNUSABLE = 'This invitation link has been used, has expired, or is not right. Ask for a new one.';

export function createInvitationService(
  store: Store,
  accounts: AccountService,
  families: Pick<FamilyService, 'ensureFamilyId' | 'join'>,
  now: () => number = Date.now,
): InvitationService {
  const { db } = store;

  async function find(secret: string) {
    if (!SECRET.test(secret)) return undefined;
    const row = await db.selectFrom('invitations').selectAll().where('secret_hash', '=', hashOf(secret)).executeTakeFirst();
    return row && row.used_at === null && Date.parse(row.expires_at) > now() ? row : undefined;
  }

  return {
    async create(inviterId) {
      const familyId = await families.ensureFamilyId(inviterId);
      const secret = randomBytes(32).toString('base64url');
      const at = now();
      const expiresAt = new Date(at + INVITATION_TTL_MS).toISOString();
      await db
        .insertInto('invitations')
        .values({ secret_hash: hashOf(secret), family_id: familyId, invited_by: inviterId, created_at: new Date(at).toISOString(), expires_at: expiresAt, used_at: null, used_by: null })
        .execute();
      return { secret, familyId, expiresAt };
    },

    async usable(secret) {
      return (await find(secret)) !== undefined;
    },

    async accept(secret, member) {
      const invitation = await find(secret);
      if (!invitation) throw new AccountRefused(INVITATION_UNUSABLE);
      const account = await accounts.add(member);
      // The link is spent by whoever marks it first; a second acceptance racing this one loses
      // here, and its account, made a moment ago, is taken back.
      const spent = await db
        .updateTable('invitations')
        .set({ used_at: new Date(now()).toISOString(), used_by: account.userId })
        .where('secret_hash', '=', invitation.secret_hash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (spent.numUpdatedRows !== 1n) {
        await accounts.remove(account.userId);
        throw new AccountRefused(INVITATION_UNUSABLE);
      }
      await families.join(invitation.family_id, account.userId);
      return account;
    },

    async signUp(member) {
      const account = await accounts.add(member);
      await families.ensureFamilyId(account.userId);
      return account;
    },
  };
}
