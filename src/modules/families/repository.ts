import type { Insertable } from 'kysely';
import type {
  DeviceRow,
  FamilyEventRow,
  FamilyRow,
  FamilyDevicesTable,
  FamilyMembershipsTable,
  MembershipRow,
} from '../../db/database.js';
import { countersOf, selectCounters, type FamilyScope } from '../../db/change-counters.js';
import { preparedPerShape, preparedStatement } from '../../db/prepared.js';
import type { Db } from '../../db/unit-of-work.js';

export async function findMembership(db: Db, userId: string): Promise<MembershipRow | undefined> {
  return db.selectFrom('family_memberships').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

const familyOfUserCounted = preparedPerShape(
  (wanted: readonly FamilyScope[]) => wanted.join(),
  (db, wanted, { userId }: { userId: string }) =>
    db
      .selectFrom('family_memberships as m')
      .innerJoin('families as f', 'f.family_id', 'm.family_id')
      .selectAll('f')
      .select((eb) => selectCounters(wanted, eb.ref('f.family_id')))
      .where('m.user_id', '=', userId),
);

/**
 * The family the user belongs to with the counters of `wanted` (see `selectCounters`), in one
 * read compiled once (db/prepared.ts); undefined when the user has no family yet.
 */
export async function findFamilyOfUserCounted(
  db: Db,
  userId: string,
  wanted: readonly FamilyScope[],
): Promise<{ row: FamilyRow; counters: number[] } | undefined> {
  const [found] = await familyOfUserCounted(db, wanted, { userId });
  if (!found) return undefined;
  const { family_id, country, flags, created_at, updated_at } = found;
  return { row: { family_id, country, flags, created_at, updated_at }, counters: countersOf(found, wanted) };
}

const familyIdOfUserCounted = preparedPerShape(
  (wanted: readonly FamilyScope[]) => wanted.join(),
  (db, wanted, { userId }: { userId: string }) =>
    db
      .selectFrom('family_memberships as m')
      .select('m.family_id')
      .select((eb) => selectCounters(wanted, eb.ref('m.family_id')))
      .where('m.user_id', '=', userId),
);

/** The id of the user's family with the counters of `wanted`, in one read compiled once; undefined without a family. */
export async function familyIdOfCounted(
  db: Db,
  userId: string,
  wanted: readonly FamilyScope[],
): Promise<{ familyId: string; counters: number[] } | undefined> {
  const [found] = await familyIdOfUserCounted(db, wanted, { userId });
  return found && { familyId: found.family_id, counters: countersOf(found, wanted) };
}

export async function findFamily(db: Db, familyId: string): Promise<FamilyRow | undefined> {
  return db.selectFrom('families').selectAll().where('family_id', '=', familyId).executeTakeFirst();
}

export async function insertFamily(db: Db, row: FamilyRow): Promise<void> {
  await db.insertInto('families').values(row).execute();
}

export async function updateFamily(
  db: Db,
  familyId: string,
  changes: Pick<FamilyRow, 'country' | 'flags' | 'updated_at'>,
): Promise<void> {
  await db.updateTable('families').set(changes).where('family_id', '=', familyId).execute();
}

/** The users listed as the family's members, in the operator's order. */
export async function listMembers(db: Db, familyId: string): Promise<MembershipRow[]> {
  return db
    .selectFrom('family_memberships')
    .selectAll()
    .where('family_id', '=', familyId)
    .where('listed', '=', 1)
    .orderBy('position')
    .orderBy('user_id')
    .execute();
}

/**
 * The family's listed members with the name of their account here (null: signed in by another
 * issuer, so no account here), in the members' order.
 */
export async function listMembersNamed(db: Db, familyId: string): Promise<(MembershipRow & { display_name: string | null })[]> {
  return db
    .selectFrom('family_memberships as m')
    .leftJoin('accounts as a', 'a.user_id', 'm.user_id')
    .selectAll('m')
    .select('a.display_name')
    .where('m.family_id', '=', familyId)
    .where('m.listed', '=', 1)
    .orderBy('m.position')
    .orderBy('m.user_id')
    .execute();
}

/** The family's members not listed (a stub family's user). */
export async function listUnlisted(db: Db, familyId: string): Promise<MembershipRow[]> {
  return db.selectFrom('family_memberships').selectAll().where('family_id', '=', familyId).where('listed', '=', 0).orderBy('user_id').execute();
}

export async function insertMembership(db: Db, row: Insertable<FamilyMembershipsTable>): Promise<void> {
  await db.insertInto('family_memberships').values(row).execute();
}

export async function updateMembership(
  db: Db,
  userId: string,
  changes: Partial<Omit<MembershipRow, 'user_id'>>,
): Promise<void> {
  await db.updateTable('family_memberships').set(changes).where('user_id', '=', userId).execute();
}

export async function deleteMembership(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('family_memberships').where('user_id', '=', userId).execute();
}

export async function listDevices(db: Db, familyId: string): Promise<DeviceRow[]> {
  return db
    .selectFrom('family_devices')
    .selectAll()
    .where('family_id', '=', familyId)
    .orderBy('position')
    .orderBy('device_id')
    .execute();
}

export async function findDevice(db: Db, deviceId: string): Promise<DeviceRow | undefined> {
  return db.selectFrom('family_devices').selectAll().where('device_id', '=', deviceId).executeTakeFirst();
}

export async function insertDevice(db: Db, row: Insertable<FamilyDevicesTable>): Promise<void> {
  await db.insertInto('family_devices').values(row).execute();
}

export async function updateDevicePosition(db: Db, deviceId: string, position: number): Promise<void> {
  await db.updateTable('family_devices').set({ position }).where('device_id', '=', deviceId).execute();
}

export async function deleteDevice(db: Db, deviceId: string): Promise<void> {
  await db.deleteFrom('family_devices').where('device_id', '=', deviceId).execute();
}

export async function addEvent(
  db: Db,
  familyId: string,
  type: string,
  at: string,
  details: Record<string, unknown> = {},
): Promise<void> {
  // Nothing reads it back in the write: answered with the commit (db/prepared.ts).
  await insertEvent.withCommit(db, { family_id: familyId, type, at, details: JSON.stringify(details) });
}

const insertEvent = preparedStatement(
  (db, { family_id, type, at, details }: { family_id: string; type: string; at: string; details: string }) =>
    db.insertInto('family_events').values({ family_id, type, at, details }),
);

/** The family's events, oldest first. */
export async function listEvents(db: Db, familyId: string): Promise<FamilyEventRow[]> {
  return db.selectFrom('family_events').selectAll().where('family_id', '=', familyId).orderBy('id').execute();
}
