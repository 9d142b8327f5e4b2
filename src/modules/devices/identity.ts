import { createHash } from 'node:crypto';
import { newHexId } from '../../shared/ids.js';
import { CARDSHELF_VERSION } from '../../shared/version.js';

/**
 * What a browser registered as a player says of itself where the public service's devices name
 * their hardware (issue 22). The public clients read these fields and check their form:
 * yoto_api's device tests expect an id that starts with "y", a MAC address, a firmware version
 * and a known `deviceFamily`, and pick a device's features by that family. A browser has no
 * hardware, so each is given the nearest true meaning, documented in docs/api.md ("Players"):
 */

/** A new player's id: "y" and 24 hex digits, in the form of the public service's device ids. */
export const newPlayerId = (): string => `y${newHexId()}`;

/**
 * The feature set public clients know a browser player by: "mini" is the family without a
 * nightlight and without a light sensor, which a browser has neither of (yoto_api falls back to
 * a nightlight player's features for a family it does not know). `deviceType` still says what
 * it is (`cardshelf-browser`).
 */
export const BROWSER_PLAYER_FAMILY = 'mini';

/**
 * A stable address for the player, as virtual network cards get one: six bytes of a hash of its
 * id, with the first byte marked locally administered and unicast (0bxxxxxx10), so that it can
 * never be a manufacturer's address.
 */
export function playerMac(deviceId: string): string {
  const bytes = createHash('sha256').update(deviceId).digest().subarray(0, 6);
  bytes[0] = (bytes[0]! & 0xfc) | 0x02;
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

/** A browser player runs the web app this server serves: its "firmware" is Cardshelf's version. */
export const PLAYER_SOFTWARE_VERSION = CARDSHELF_VERSION;
