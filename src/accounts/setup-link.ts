import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '../db/dialect.js';
import type { FamilyService } from '../modules/families/service.js';
import type { NewMember } from './invitations.js';
import { countAccounts } from './repository.js';
import { AccountRefused, type Account, type AccountService } from './service.js';
import * as repo from './setup-links-repository.js';

/**
 * The first owner's set-up link: on an instance with no accounts, `serve` prints a link that
 * makes one owner account. Only a SHA-256 of its secret is stored (as invitations). A link works
 * once, within SETUP_LINK_TTL_MS, and only while the instance has no accounts: once any account
 * exists (made by a link, or by `cardshelf user add`), every link is dead. Several instances
 * starting together each print one; the first used wins and spends them all.
 */
export const SETUP_LINK_TTL_MS = 24 * 3_600_000;

export const SETUP_LINK_UNUSABLE = 'This set-up link has been used, has expired, or is not right. Restart the server for a new one, or use `cardshelf user add --owner`.';

const hashOf = (secret: string): string => createHash('sha256').update(secret).digest('base64url');
const SECRET = /^[A-Za-z0-9_-]{43}$/;

export interface SetupLinkService {
  /** A new link's secret when the instance has no accounts; otherwise undefined. */
  issueIfEmpty(): Promise<string | undefined>;
  usable(secret: string): Promise<boolean>;
  /** Makes the first owner (with a family of their own); AccountRefused when the link or the form cannot be used. */
  accept(secret: string, member: NewMember): Promise<Account>;
}

export function createSetupLinkService(
  store: Store,
  accounts: AccountService,
  families: Pick<FamilyService, 'ensureFamilyId'>,
  now: () => number = Date.now,
): SetupLinkService {
  const { db, dialect } = store;

  async function usable(secret: string): Promise<boolean> {
    if (!SECRET.test(secret)) return false;
    const row = await repo.findSetupLink(db, hashOf(secret));
    return row !== undefined && row.used_at === null && Date.parse(row.expires_at) > now() && (await countAccounts(db)) === 0;
  }

  return {
    async issueIfEmpty() {
      if ((await countAccounts(db)) > 0) return undefined;
      const secret = randomBytes(32).toString('base64url');
      const at = now();
      await repo.insertSetupLink(db, { secret_hash: hashOf(secret), created_at: new Date(at).toISOString(), expires_at: new Date(at + SETUP_LINK_TTL_MS).toISOString(), used_at: null });
      return secret;
    },

    usable,

    async accept(secret, member) {
      // Every link is spent at once, under a lock, by the first acceptance: two links used
      // together cannot make two first owners.
      const spentAt = new Date(now()).toISOString();
      const spent = await db.transaction().execute(async (trx) => {
        await dialect.lockKey(trx, 'setup-links');
        const row = SECRET.test(secret) ? await repo.findSetupLink(trx, hashOf(secret)) : undefined;
        if (!row || row.used_at !== null || Date.parse(row.expires_at) <= now() || (await countAccounts(trx)) > 0) return false;
        await repo.spendAll(trx, spentAt);
        return true;
      });
      if (!spent) throw new AccountRefused(SETUP_LINK_UNUSABLE);
      try {
        const account = await accounts.add({ ...member, owner: true });
        await families.ensureFamilyId(account.userId);
        return account;
      } catch (err) {
        // A refused form (a short password): the links are usable again.
        await repo.unspend(db, spentAt);
        throw err;
      }
    },
  };
}
