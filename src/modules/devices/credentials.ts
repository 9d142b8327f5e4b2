import type { Principal } from '../../auth/principal.js';
import type { Store } from '../../db/dialect.js';
import { credentialStands } from './repository.js';

/**
 * The check the auth plugin makes on every request of a player (src/auth/plugin.ts): its
 * credential stands while its device is registered with it and the member it acts through is
 * still in the device's family. Built apart from the service, since the plugin comes first.
 */
export function playerCredentialCheck(store: Store): (player: NonNullable<Principal['player']>, userId: string) => Promise<boolean> {
  return (player, userId) => credentialStands(store.db, player.deviceId, player.credentialId, userId);
}
