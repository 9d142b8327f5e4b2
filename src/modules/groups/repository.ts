import type { Insertable } from 'kysely';
import type { GroupRow, LibraryGroupsTable } from '../../db/database.js';
import { countersOf, selectCounters, type FamilyScope } from '../../db/change-counters.js';
import { preparedPerShape, preparedStatement, withCommit } from '../../db/prepared.js';
import type { Db } from '../../db/unit-of-work.js';

/** A family's group; another family's group is not found, like a missing one. */
const groupOfFamily = preparedStatement(
  (db, { familyId, groupId }: { familyId: string; groupId: string }) =>
    db.selectFrom('library_groups').selectAll().where('group_id', '=', groupId).where('family_id', '=', familyId),
);

export async function findGroup(db: Db, familyId: string, groupId: string): Promise<GroupRow | undefined> {
  const [row] = await groupOfFamily(db, { familyId, groupId });
  return row;
}

const groupOfUserCounted = preparedPerShape(
  (wanted: readonly FamilyScope[]) => wanted.join(),
  (db, wanted, { userId, groupId }: { userId: string; groupId: string }) =>
    db
      .selectFrom('library_groups as g')
      .innerJoin('family_memberships as m', 'm.family_id', 'g.family_id')
      .selectAll('g')
      .select((eb) => selectCounters(wanted, eb.ref('g.family_id')))
      .where('m.user_id', '=', userId)
      .where('g.group_id', '=', groupId),
);

/**
 * The caller's family's group with the counters of `wanted` (see `selectCounters`), in one read
 * compiled once (db/prepared.ts): undefined when the user has no family, or the group is not
 * their family's.
 */
export async function findGroupOfUserCounted(
  db: Db,
  userId: string,
  groupId: string,
  wanted: readonly FamilyScope[],
): Promise<{ row: GroupRow; counters: number[] } | undefined> {
  const [found] = await groupOfUserCounted(db, wanted, { userId, groupId });
  if (!found) return undefined;
  const { group_id, family_id, name, image_id, items, created_at, last_modified_at, version } = found;
  return {
    row: { group_id, family_id, name, image_id, items, created_at, last_modified_at, version },
    counters: countersOf(found, wanted),
  };
}

export async function listGroups(db: Db, familyId: string): Promise<GroupRow[]> {
  return db
    .selectFrom('library_groups')
    .selectAll()
    .where('family_id', '=', familyId)
    .orderBy('created_at')
    .orderBy('group_id')
    .execute();
}

const countOfFamily = preparedStatement(
  (db, { familyId }: { familyId: string }) =>
    db.selectFrom('library_groups').select((eb) => eb.fn.countAll<number | string>().as('n')).where('family_id', '=', familyId),
);

export async function countGroups(db: Db, familyId: string): Promise<number> {
  const [row] = await countOfFamily(db, { familyId });
  return Number(row?.n ?? 0);
}

/** Answered with the unit of work's commit (db/prepared.ts): the write reads nothing of it back. */
export async function insertGroup(db: Db, row: Insertable<LibraryGroupsTable>): Promise<void> {
  await withCommit(db, db.insertInto('library_groups').values(row));
}

export async function updateGroup(
  db: Db,
  groupId: string,
  changes: Pick<GroupRow, 'name' | 'image_id' | 'items' | 'last_modified_at'>,
): Promise<void> {
  // Under the family's lock the group is there (found first): answered with the commit.
  await update.withCommit(db, { ...changes, groupId });
}

const update = preparedStatement(
  (db, { name, image_id, items, last_modified_at, groupId }: Pick<GroupRow, 'name' | 'image_id' | 'items' | 'last_modified_at'> & { groupId: string }) =>
    db
      .updateTable('library_groups')
      .set((eb) => ({ name, image_id, items, last_modified_at, version: eb('version', '+', 1) }))
      .where('group_id', '=', groupId),
);

export async function deleteGroup(db: Db, familyId: string, groupId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('library_groups')
    .where('group_id', '=', groupId)
    .where('family_id', '=', familyId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
