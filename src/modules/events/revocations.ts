import type { Principal } from '../../auth/principal.js';

/**
 * The events that take a stream's right to read away, and whose streams they end (issue 33):
 * every instance reads them from the log (so a change made on one instance, or by the
 * `cardshelf` command, ends the streams of every instance at once). The heartbeat's check of
 * each stream's principal (`principalStands`) ends what these miss.
 */

/** An account was disabled (`cardshelf user disable`): to that user alone. */
export const ACCOUNT_DISABLED = 'account.disabled' as const;
/** A player was removed from its family (`ids.deviceId`): to the family. */
export const PLAYER_REMOVED = 'player.removed' as const;
/** A user moved into or out of a family: to each family changed, and to that user alone. */
export const FAMILY_CHANGED = 'family.changed' as const;

/** Who an event shuts out: every stream made with an account's authority, or one player's. */
export type Revocation = { account: string; why: string } | { player: string; why: string };

/** An event of the log, as `repository.ts` reads it. */
interface Logged {
  familyId: string | null;
  userId: string | null;
  kind: string;
  data: string;
}

export function revocationOf(event: Logged): Revocation | undefined {
  if (event.userId !== null) {
    // An account's streams follow the family it was in; its players' credentials stand only
    // while it stays there: they end with it, and reconnect to the new family if they still may.
    if (event.kind === FAMILY_CHANGED) return { account: event.userId, why: 'family changed; reconnect' };
    if (event.kind === ACCOUNT_DISABLED) return { account: event.userId, why: 'account disabled' };
  }
  if (event.kind === PLAYER_REMOVED && event.familyId !== null) {
    const deviceId = (JSON.parse(event.data) as { ids?: { deviceId?: unknown } }).ids?.deviceId;
    if (typeof deviceId === 'string') return { player: deviceId, why: 'player removed from its family' };
  }
  return undefined;
}

/** Whether `revocation` shuts out a stream read with `principal`. */
export function shutsOut(revocation: Revocation, principal: Pick<Principal, 'userId' | 'player'>): boolean {
  return 'account' in revocation ? principal.userId === revocation.account : principal.player?.deviceId === revocation.player;
}
