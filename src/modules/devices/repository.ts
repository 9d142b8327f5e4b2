import type { DeviceRow } from '../../db/database.js';
import type { Db } from '../../db/unit-of-work.js';

/** The SQL of players: rows of `family_devices` and their player columns (migration 009). */

export async function listFamilyDevices(db: Db, familyId: string): Promise<DeviceRow[]> {
  return db.selectFrom('family_devices').selectAll().where('family_id', '=', familyId).orderBy('position').orderBy('device_id').execute();
}

/** The device if it is the family's; another family's answers like a missing one. */
export async function findFamilyDevice(db: Db, familyId: string, deviceId: string): Promise<DeviceRow | undefined> {
  return db.selectFrom('family_devices').selectAll().where('device_id', '=', deviceId).where('family_id', '=', familyId).executeTakeFirst();
}

/** How many players (browsers registered with a credential) the family has. */
export async function countPlayers(db: Db, familyId: string, deviceType: string): Promise<number> {
  const row = await db
    .selectFrom('family_devices')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('family_id', '=', familyId)
    .where('device_type', '=', deviceType)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function nextPosition(db: Db, familyId: string): Promise<number> {
  const row = await db
    .selectFrom('family_devices')
    .select((eb) => eb.fn.max('position').as('last'))
    .where('family_id', '=', familyId)
    .executeTakeFirst();
  return row?.last === null || row?.last === undefined ? 0 : Number(row.last) + 1;
}

export async function insertPlayer(
  db: Db,
  row: Pick<DeviceRow, 'device_id' | 'family_id' | 'added_at' | 'position' | 'name' | 'device_type' | 'credential_id' | 'registered_by'>,
): Promise<void> {
  await db.insertInto('family_devices').values(row).execute();
}

export async function updateDevice(
  db: Db,
  deviceId: string,
  changes: Partial<Pick<DeviceRow, 'name' | 'config' | 'shortcuts' | 'status' | 'status_at'>>,
): Promise<void> {
  // Nothing to change (`PATCH .../config` with `{}`) is no statement: an empty SET is not SQL.
  if (Object.keys(changes).length === 0) return;
  await db.updateTable('family_devices').set(changes).where('device_id', '=', deviceId).execute();
}

/** Makes the device a player (its name, type and who registered it) unless it is one already (it has a type). */
export async function makeUnregisteredPlayer(
  db: Db,
  deviceId: string,
  player: Pick<DeviceRow, 'name' | 'device_type' | 'registered_by'>,
): Promise<void> {
  await db.updateTable('family_devices').set(player).where('device_id', '=', deviceId).where('device_type', 'is', null).execute();
}

export async function deleteDevice(db: Db, deviceId: string): Promise<void> {
  await db.deleteFrom('family_devices').where('device_id', '=', deviceId).execute();
}

/**
 * Whether a player's credential still stands: its device is registered with this credential,
 * and the member it acts through still belongs to the device's family. One indexed read.
 */
export async function credentialStands(db: Db, deviceId: string, credentialId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('family_devices as d')
    .innerJoin('family_memberships as m', 'm.family_id', 'd.family_id')
    .select('d.device_id')
    .where('d.device_id', '=', deviceId)
    .where('d.credential_id', '=', credentialId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}
