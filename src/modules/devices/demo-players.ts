import type { Store } from '../../db/dialect.js';
import { listFamilyDevices, makeUnregisteredPlayer } from './repository.js';
import { BROWSER_PLAYER } from './rules.js';

/**
 * The demo family's two players (`cardshelf seed --demo`): browsers registered as players
 * (issue 22) that were never opened, so they are offline and hold no credential. They answer
 * the devices routes as any browser player does (a "y" id, the "mini" features, an address and
 * a software version), which is what the public clients' device tests read. Ids fixed, so that
 * seeding again finds them.
 */
export const DEMO_PLAYERS = [
  { deviceId: 'y00000000000000000000de01', name: 'Living room' },
  { deviceId: 'y00000000000000000000de02', name: 'Nursery' },
] as const;

/**
 * The devices the demo family lists: its two players, and every player registered in it since
 * (an operator's family write names the whole list, so those must stay in it).
 */
export async function demoFamilyDeviceIds(store: Store, familyId: string): Promise<string[]> {
  const registered = (await listFamilyDevices(store.db, familyId)).map((d) => d.device_id);
  return [...new Set([...DEMO_PLAYERS.map((p) => p.deviceId), ...registered])];
}

/** Makes the demo's listed devices browser players registered by `userId`; players already made stay as they are. */
export async function markDemoPlayers(store: Store, userId: string): Promise<void> {
  for (const { deviceId, name } of DEMO_PLAYERS) {
    await makeUnregisteredPlayer(store.db, deviceId, { name, device_type: BROWSER_PLAYER, registered_by: userId });
  }
}
