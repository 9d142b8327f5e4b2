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

/**
 * Who an event shuts out: every stream made with an account's authority (but those that follow
 * `into`, the family the account moved into: they began after the move), or one player's.
 */
export type Revocation = { account: string; into?: string; why: string } | { player: string; why: string };

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
    if (event.kind === FAMILY_CHANGED) return { account: event.userId, into: idOf(event, 'familyId'), why: 'family changed; reconnect' };
    if (event.kind === ACCOUNT_DISABLED) return { account: event.userId, why: 'account disabled' };
  }
  if (event.kind === PLAYER_REMOVED && event.familyId !== null) {
    const deviceId = idOf(event, 'deviceId');
    if (deviceId !== undefined) return { player: deviceId, why: 'player removed from its family' };
  }
  return undefined;
}

/** Whether `revocation` shuts out a stream of `familyId` read with `principal`. */
export function shutsOut(revocation: Revocation, principal: Pick<Principal, 'userId' | 'player'>, familyId: string | undefined): boolean {
  if ('player' in revocation) return principal.player?.deviceId === revocation.player;
  return principal.userId === revocation.account && (revocation.into === undefined || revocation.into !== familyId);
}

function idOf(event: Logged, name: string): string | undefined {
  const id = (JSON.parse(event.data) as { ids?: Record<string, unknown> }).ids?.[name];
  return typeof id === 'string' ? id : undefined;
}
