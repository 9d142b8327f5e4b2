import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '../db/dialect.js';
import type { FamilyService } from '../modules/families/service.js';
import * as repo from './invitations-repository.js';
import { AccountRefused, EmailTaken, type Account, type AccountService } from './service.js';

/**
 * Invitations: a member of a family (its owner or anyone in it) makes a link; whoever opens it
 * may make one account, which joins the inviter's family. A link is good for 7 days and once, and
 * only while its inviter is still in that family. Only a SHA-256 of its secret is stored, so the
 * table does not hold working links; that digest is the invitation's id, by which members of the
 * family list and revoke the open ones.
 */

export const INVITATION_TTL_MS = 7 * 86_400_000;

/** Who may make an account (`SIGNUP`): the operator only, invited people, or anyone. */
export type SignupPolicy = 'closed' | 'invite' | 'open';

export interface Invitation {
  /** The secret that goes in the link; not stored. */
  secret: string;
  id: string;
  familyId: string;
  expiresAt: string;
}

/** An open invitation as the family sees it: never its link. */
export interface OpenInvitation {
  id: string;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
}

export interface NewMember {
  email: string;
  displayName: string;
  password: string;
}

/** The inviter has as many open invitations as they may (`INVITATIONS_PER_MEMBER`). */
export class InvitationLimit extends Error {}

export interface InvitationService {
  /**
   * A new link into the family of `inviterId` (made a stub family first if they have none).
   * InvitationLimit when the inviter has `perMember` open ones already.
   */
  create(inviterId: string): Promise<Invitation>;
  /** The open invitations of the family of `userId` (none when they have no family). */
  listOpen(userId: string): Promise<OpenInvitation[]>;
  /** Revokes an open invitation of the family of `userId`: its link stops working. False: no such open invitation there. */
  revoke(userId: string, id: string): Promise<boolean>;
  /** Whether the link can still be used: known, not used, not expired, its inviter still in the family. */
  usable(secret: string): Promise<boolean>;
  /**
   * Makes the account and adds it to the inviter's family. Refused (AccountRefused) when the link
   * cannot be used or the account cannot be made; a refused form (a weak password) leaves the link
   * usable. EmailTaken when the email has an account: the link is spent then too, as by a success,
   * so that neither the answer nor the link tells whether an email has an account.
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
  families: Pick<FamilyService, 'ensureFamilyId' | 'findFamilyId' | 'join'>,
  perMember: number,
  now: () => number = Date.now,
): InvitationService {
  const { db, dialect } = store;
  const nowIso = (): string => new Date(now()).toISOString();

  async function find(secret: string) {
    if (!SECRET.test(secret)) return undefined;
    const row = await repo.findInvitation(db, hashOf(secret));
    if (!row || row.used_at !== null || Date.parse(row.expires_at) <= now()) return undefined;
    // An inviter who left the family (or moved to another) no longer lets anyone into it.
    return (await families.findFamilyId(row.invited_by)) === row.family_id ? row : undefined;
  }

  return {
    async create(inviterId) {
      const familyId = await families.ensureFamilyId(inviterId);
      const secret = randomBytes(32).toString('base64url');
      const at = now();
      const expiresAt = new Date(at + INVITATION_TTL_MS).toISOString();
      const id = hashOf(secret);
      // Counted and added under the inviter's lock: parallel requests cannot pass the cap together.
      await db.transaction().execute(async (trx) => {
        await dialect.lockKey(trx, `invitations:${inviterId}`);
        if ((await repo.countOpenBy(trx, inviterId, new Date(at).toISOString())) >= perMember) {
          throw new InvitationLimit(`you have ${perMember} open invitations, as many as one may; revoke one or wait until one is used or expires`);
        }
        await repo.insertInvitation(trx, { secret_hash: id, family_id: familyId, invited_by: inviterId, created_at: new Date(at).toISOString(), expires_at: expiresAt, used_at: null, used_by: null });
      });
      return { secret, id, familyId, expiresAt };
    },

    async listOpen(userId) {
      const familyId = await families.findFamilyId(userId);
      if (familyId === undefined) return [];
      const rows = await repo.listOpenOfFamily(db, familyId, nowIso());
      return rows.map((r) => ({ id: r.secret_hash, invitedBy: r.invited_by, createdAt: r.created_at, expiresAt: r.expires_at }));
    },

    async revoke(userId, id) {
      const familyId = await families.findFamilyId(userId);
      return familyId !== undefined && (await repo.deleteOpen(db, familyId, id, nowIso()));
    },

    async usable(secret) {
      return (await find(secret)) !== undefined;
    },

    async accept(secret, member) {
      const invitation = await find(secret);
      if (!invitation) throw new AccountRefused(INVITATION_UNUSABLE);
      let account: Account;
      try {
        account = await accounts.add(member);
      } catch (err) {
        if (err instanceof EmailTaken) await repo.spend(db, invitation.secret_hash, nowIso(), null);
        throw err;
      }
      // The link is spent by whoever marks it first; a second acceptance racing this one loses
      // here, and its account, made a moment ago, is taken back.
      if (!(await repo.spend(db, invitation.secret_hash, nowIso(), account.userId))) {
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
