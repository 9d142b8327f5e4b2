import type { Config } from '../../config.js';
import type { FamilyRow } from '../../db/database.js';
import { bumpCounters, familyScope, readCounters, scopes, type FamilyScope } from '../../db/change-counters.js';
import type { Store } from '../../db/dialect.js';
import type { Tagger } from '../../shared/entity-tag.js';
import { familyLock, inUnitOfWork, userLock, type Trx } from '../../db/unit-of-work.js';
import { AppError, badRequest, notFound } from '../../shared/errors.js';
import { now } from '../../shared/clock.js';
import { newHexId } from '../../shared/ids.js';
import { publishAll } from '../events/publish.js';
import { PLAYER_REMOVED } from '../events/revocations.js';
import { reconcileList } from './reconcile.js';
import { familyIdOfUser } from './queries.js';
import * as repo from './repository.js';
import { approvalTime, familyView, firstDuplicate, isStub, memberView } from './rules.js';
import type { AdminFamilyInput, Family, NamedMember } from './schemas.js';

export type FamilyEventType =
  | 'family-created'
  | 'member-added'
  | 'member-removed'
  | 'member-approved'
  | 'device-added'
  | 'device-removed'
  | 'card-added'
  | 'group-created'
  | 'group-updated'
  | 'group-deleted';

export interface FamilyService {
  /** The user's family id, creating an empty (stub) family on first need. */
  ensureFamilyId(userId: string): Promise<string>;
  /** The user's family id, or undefined when the user has none yet (creates nothing). */
  findFamilyId(userId: string): Promise<string | undefined>;
  /**
   * The user's family id and the change counters of `wanted` (for an entity tag) in one read,
   * or undefined when the user has no family yet (creates nothing).
   */
  findFamilyIdCounted(userId: string, wanted: readonly FamilyScope[]): Promise<{ familyId: string; counters: number[] } | undefined>;
  /** `findFamilyIdCounted`, creating an empty (stub) family on first need as `ensureFamilyId` does. */
  ensureFamilyIdCounted(userId: string, wanted: readonly FamilyScope[]): Promise<{ familyId: string; counters: number[] }>;
  /**
   * `GET /user/family`: its tag (from change counters), and the answer when it is rendered, null
   * for a stub family unless `allowStub`.
   */
  read(userId: string, opts: { showHistory: boolean; allowStub: boolean }): Promise<{ tag: string; render: () => Promise<Family | null> }>;
  /**
   * A new user joins a family (an invitation accepted): listed after its members. Members not
   * listed yet (the inviter of a family that was only a stub) are listed too, since the family
   * now has people in it, approved. Refused (false) when the user already belongs to a family.
   */
  join(familyId: string, userId: string): Promise<boolean>;
  /** `GET /user/family/members`: the caller's family's listed members with their names (none for a stub family). */
  members(callerId: string): Promise<NamedMember[]>;
  /** `PATCH /user/family/members/{userId}`: an approved member approves one waiting (see `checkManager`). */
  approve(callerId: string, userId: string): Promise<NamedMember>;
  /** `DELETE /user/family/members/{userId}`: an approved member removes another; they get a stub family on next need. */
  remove(callerId: string, userId: string): Promise<void>;
  /** `PUT /admin/families/{familyId}`. */
  adminPut(familyId: string, input: AdminFamilyInput): Promise<{ created: boolean; family: Family }>;
  /** Records an event in the family's history, inside the caller's transaction. */
  recordEvent(
    trx: Trx,
    familyId: string,
    type: FamilyEventType,
    at: string,
    details?: Record<string, unknown>,
  ): Promise<void>;
}

export function createFamilyService(store: Store, config: Pick<Config, 'defaultCountry'>, tagger: Tagger): FamilyService {
  const { db } = store;

  async function ensureFamilyId(userId: string): Promise<string> {
    const known = await familyIdOfUser(db, userId);
    if (known) return known;
    // Two first requests of one user race here: the lock lets exactly one create the stub.
    return inUnitOfWork(store, [userLock(userId)], async (trx) => {
      const raced = await familyIdOfUser(trx, userId);
      if (raced) return raced;
      const at = now();
      const familyId = newHexId();
      await repo.insertFamily(trx, {
        family_id: familyId,
        country: config.defaultCountry,
        flags: JSON.stringify({ sharingOn: false }),
        created_at: at,
        updated_at: at,
      });
      await repo.insertMembership(trx, {
        user_id: userId,
        family_id: familyId,
        listed: 0,
        added_at: at,
        approved: 0,
        approved_at: null,
        verified: 0,
        verified_email: null,
        position: 0,
      });
      await repo.addEvent(trx, familyId, 'family-created', at, { userId });
      return familyId;
    });
  }

  /** `GET /user/family`'s tag: the family, the form asked for, and the counters it shows. */
  const familyTag = (familyId: string, form: { showHistory: boolean; allowStub: boolean }, counters: number[]): string =>
    tagger.tag(['family', familyId, form.showHistory, form.allowStub, ...counters]);

  /**
   * Live events of a change of families' members or devices, as the last statements of its
   * transaction: `family.changed` to each family (with the new tag of `GET /user/family`), and to
   * each user who moved in or out, alone (their stream then follows their new family).
   */
  async function publishFamilyChanges(
    trx: Trx,
    familyIds: readonly string[],
    movedUsers: ReadonlyMap<string, string | undefined>,
    removedDevices: readonly { familyId: string; deviceId: string }[] = [],
  ): Promise<void> {
    const counters = await readCounters(trx, familyIds.map(scopes.family));
    await publishAll(trx, store.dialect, [
      // As `DELETE /device-v2/{id}` says it (modules/devices): a player's credential ends with
      // its device's place in the family, and so do its event streams.
      ...removedDevices.map(({ familyId, deviceId }) => ({
        kind: PLAYER_REMOVED,
        audience: { familyId },
        ids: { deviceId },
        read: '/device-v2/devices/mine',
      })),
      ...familyIds.map((familyId, i) => ({
        kind: 'family.changed' as const,
        audience: { familyId },
        ids: { familyId },
        read: '/user/family',
        tag: familyTag(familyId, { showHistory: false, allowStub: false }, [counters[i] ?? 0]),
      })),
      ...[...movedUsers].map(([userId, familyId]) => ({
        kind: 'family.changed' as const,
        audience: { userId },
        ids: { userId, ...(familyId === undefined ? {} : { familyId }) },
      })),
    ]);
  }

  async function ensureFamilyIdCounted(userId: string, wanted: readonly FamilyScope[]): Promise<{ familyId: string; counters: number[] }> {
    const found = await repo.familyIdOfCounted(db, userId, wanted);
    if (found) return found;
    const familyId = await ensureFamilyId(userId);
    return { familyId, counters: await readCounters(db, wanted.map((kind) => familyScope(kind, familyId))) };
  }

  async function load(familyId: string, showHistory: boolean): Promise<Family | undefined> {
    const family = await repo.findFamily(db, familyId);
    return family && render(family, showHistory);
  }

  async function render(family: FamilyRow, showHistory: boolean): Promise<Family> {
    const { family_id: familyId } = family;
    const [members, devices, events] = await Promise.all([
      repo.listMembers(db, familyId),
      repo.listDevices(db, familyId),
      showHistory ? repo.listEvents(db, familyId) : Promise.resolve(undefined),
    ]);
    const view = familyView(family, members, devices);
    if (events) {
      view.history = events.map((e) => ({ ...(JSON.parse(e.details) as Record<string, unknown>), type: e.type, at: e.at }));
    }
    return view;
  }

  /** The member as `GET /user/family/members` shows them to `callerId`, read in `trx`. */
  async function namedMember(trx: Trx, familyId: string, userId: string, callerId: string): Promise<NamedMember> {
    const row = (await repo.listMembersNamed(trx, familyId)).find((m) => m.user_id === userId);
    if (!row) throw new Error(`member ${userId} vanished from family ${familyId}`);
    return { ...memberView(row), displayName: row.display_name, self: userId === callerId };
  }

  /**
   * Runs `change` on a member of the caller's family, in one transaction holding the family's and
   * both users' locks. The rules (docs/api.md, "Family"): the member must be listed in the
   * caller's family (else 404, as another family's member is none of the caller's business); the
   * caller must be an approved member (a member waiting for approval decides nothing); no one
   * approves or removes themselves.
   */
  async function changeMember<T>(callerId: string, userId: string, change: (trx: Trx, familyId: string, at: string) => Promise<T>): Promise<T> {
    const familyId = await familyIdOfUser(db, callerId);
    if (!familyId) throw notFound('member');
    return inUnitOfWork(store, [familyLock(familyId), ...[callerId, userId].sort().map(userLock)], async (trx) => {
      const [caller, member] = await Promise.all([repo.findMembership(trx, callerId), repo.findMembership(trx, userId)]);
      if (!member || member.family_id !== familyId || member.listed !== 1 || caller?.family_id !== familyId) throw notFound('member');
      if (caller.listed !== 1 || caller.approved !== 1) throw new AppError('forbidden', 'only an approved member of the family approves or removes members');
      if (callerId === userId) throw badRequest('a member cannot approve or remove themselves');
      return change(trx, familyId, now());
    });
  }

  return {
    ensureFamilyId,
    findFamilyId: (userId) => familyIdOfUser(db, userId),
    findFamilyIdCounted: (userId, wanted) => repo.familyIdOfCounted(db, userId, wanted),
    ensureFamilyIdCounted,

    async read(userId, { showHistory, allowStub }) {
      const tagOf = (familyId: string, counters: number[]): string => familyTag(familyId, { showHistory, allowStub }, counters);
      const shown = (family: Family | undefined): Family | null =>
        !family || (isStub(family) && !allowStub) ? null : family;
      // The history shows group events too: its tag shows the groups' counter.
      const wanted: FamilyScope[] = showHistory ? ['family', 'groups'] : ['family'];
      const found = await repo.findFamilyOfUserCounted(db, userId, wanted);
      if (found) {
        // The family's row and its counters come from one statement, so they agree; members and
        // devices are read after the tag, so the answer is never older than the tag.
        return { tag: tagOf(found.row.family_id, found.counters), render: async () => shown(await render(found.row, showHistory)) };
      }
      // A user's first request: the stub family is made here, as for any other first need.
      const { familyId, counters } = await ensureFamilyIdCounted(userId, wanted);
      return { tag: tagOf(familyId, counters), render: async () => shown(await load(familyId, showHistory)) };
    },

    async members(callerId) {
      const familyId = await familyIdOfUser(db, callerId);
      if (!familyId) return [];
      const rows = await repo.listMembersNamed(db, familyId);
      return rows.map((row) => ({ ...memberView(row), displayName: row.display_name, self: row.user_id === callerId }));
    },

    async approve(callerId, userId) {
      return changeMember(callerId, userId, async (trx, familyId, at) => {
        const member = await repo.findMembership(trx, userId);
        // Approving an approved member changes nothing: the first approval's time stays.
        if (member?.approved !== 1) {
          await repo.updateMembership(trx, userId, { approved: 1, approved_at: at });
          await repo.addEvent(trx, familyId, 'member-approved', at, { userId, by: callerId });
          await bumpCounters(trx, [scopes.family(familyId)]);
          await publishFamilyChanges(trx, [familyId], new Map());
        }
        return namedMember(trx, familyId, userId, callerId);
      });
    },

    async remove(callerId, userId) {
      await changeMember(callerId, userId, async (trx, familyId, at) => {
        await repo.deleteMembership(trx, userId);
        await repo.addEvent(trx, familyId, 'member-removed', at, { userId, by: callerId });
        await bumpCounters(trx, [scopes.family(familyId)]);
        await publishFamilyChanges(trx, [familyId], new Map([[userId, undefined]]));
      });
    },

    async adminPut(familyId, input) {
      const members = input.members ?? [];
      const devices = input.devices ?? [];
      const duplicate =
        firstDuplicate(members.map((m) => m.userId)) ?? firstDuplicate(devices.map((d) => d.deviceId));
      if (duplicate !== undefined) throw badRequest(`'${duplicate}' is listed twice`);

      const created = await inUnitOfWork(store, [familyLock(familyId)], async (trx, lockMore) => {
        // Every user whose membership this may change is locked as ensureFamilyId locks them,
        // so a user's first request (which makes a stub family) or another family's PUT that
        // lists the same user waits for this one instead of inserting a second membership.
        const current = await repo.listMembers(trx, familyId);
        await lockMore([...members.map((m) => userLock(m.userId)), ...current.map((m) => userLock(m.user_id))]);
        const at = now();
        const existing = await repo.findFamily(trx, familyId);
        // A replace: flags left out of the body fall back to their defaults.
        const flags = JSON.stringify({ sharingOn: false, ...input.flags });
        const country = input.country.toUpperCase();
        if (existing) {
          await repo.updateFamily(trx, familyId, { country, flags, updated_at: at });
        } else {
          await repo.insertFamily(trx, { family_id: familyId, country, flags, created_at: at, updated_at: at });
          await repo.addEvent(trx, familyId, 'family-created', at, {});
        }
        // This family, and every family a member or device leaves for it.
        const changed = new Set([familyId]);
        const moved = new Map<string, string | undefined>();
        const removedDevices: { familyId: string; deviceId: string }[] = [];
        await replaceMembers(trx, familyId, members, at, changed, moved);
        await replaceDevices(trx, familyId, devices, at, changed, removedDevices);
        await bumpCounters(trx, [...changed].map(scopes.family));
        await publishFamilyChanges(trx, [...changed].sort(), moved, removedDevices);
        return !existing;
      });
      const family = await load(familyId, false);
      if (!family) throw new Error(`family ${familyId} vanished after it was written`);
      return { created, family };
    },

    async join(familyId, userId) {
      return inUnitOfWork(store, [familyLock(familyId), userLock(userId)], async (trx, lockMore) => {
        if (await repo.findMembership(trx, userId)) return false;
        const at = now();
        const listed = await repo.listMembers(trx, familyId);
        let position = listed.length === 0 ? 0 : Math.max(...listed.map((m) => m.position)) + 1;
        const unlisted = await repo.listUnlisted(trx, familyId);
        await lockMore(unlisted.map((m) => userLock(m.user_id)));
        // The stub's user made the family and invited the newcomer: listed as its approved member,
        // so that someone may approve the newcomer (PATCH /user/family/members).
        for (const stub of unlisted) {
          await repo.updateMembership(trx, stub.user_id, { listed: 1, position: position++, approved: 1, approved_at: at });
          await repo.addEvent(trx, familyId, 'member-added', at, { userId: stub.user_id });
        }
        await repo.insertMembership(trx, {
          user_id: userId,
          family_id: familyId,
          listed: 1,
          added_at: at,
          approved: 0,
          approved_at: null,
          verified: 0,
          verified_email: null,
          position,
        });
        await repo.addEvent(trx, familyId, 'member-added', at, { userId });
        await bumpCounters(trx, [scopes.family(familyId)]);
        await publishFamilyChanges(trx, [familyId], new Map([[userId, familyId]]));
        return true;
      });
    },
    async recordEvent(trx, familyId, type, at, details = {}) {
      await repo.addEvent(trx, familyId, type, at, details);
    },
  };

  /** Makes `members` the family's listed members; listing a user moves them into this family. */
  async function replaceMembers(
    trx: Trx,
    familyId: string,
    members: NonNullable<AdminFamilyInput['members']>,
    at: string,
    changed: Set<string>,
    moved: Map<string, string | undefined>,
  ): Promise<void> {
    const byUser = new Map(members.map((m) => [m.userId, m]));
    const fieldsOf = (userId: string) => {
      const m = byUser.get(userId);
      return { approved: m?.approved ?? false, verified: m?.verified ?? false, verifiedEmail: m?.verifiedEmail ?? null };
    };
    await reconcileList(members.map((m) => m.userId), {
      present: await repo.listMembers(trx, familyId),
      idOf: (row) => row.user_id,
      find: (userId) => repo.findMembership(trx, userId),
      // A stub membership in this family is not listed: listing the user makes a new one.
      isHere: (row) => row.family_id === familyId && row.listed === 1,
      async leave(row) {
        await repo.deleteMembership(trx, row.user_id);
        await repo.addEvent(trx, familyId, 'member-removed', at, { userId: row.user_id });
        moved.set(row.user_id, undefined);
      },
      async stay(row, position) {
        const { approved, verified, verifiedEmail } = fieldsOf(row.user_id);
        await repo.updateMembership(trx, row.user_id, {
          approved: approved ? 1 : 0,
          approved_at: approvalTime(approved, { approved: row.approved === 1, approvedAt: row.approved_at }, at),
          verified: verified ? 1 : 0,
          verified_email: verifiedEmail,
          position,
        });
      },
      async moveIn(userId, position, previous) {
        if (previous) {
          await repo.deleteMembership(trx, userId);
          changed.add(previous.family_id);
          if (previous.family_id !== familyId && previous.listed === 1) {
            await repo.addEvent(trx, previous.family_id, 'member-removed', at, { userId });
          }
        }
        if (previous?.family_id !== familyId) moved.set(userId, familyId);
        const { approved, verified, verifiedEmail } = fieldsOf(userId);
        await repo.insertMembership(trx, {
          user_id: userId,
          family_id: familyId,
          listed: 1,
          added_at: at,
          approved: approved ? 1 : 0,
          approved_at: approvalTime(approved, undefined, at),
          verified: verified ? 1 : 0,
          verified_email: verifiedEmail,
          position,
        });
        await repo.addEvent(trx, familyId, 'member-added', at, { userId });
      },
    });
  }

  /** Makes `devices` the family's devices; listing a device moves it into this family. */
  async function replaceDevices(
    trx: Trx,
    familyId: string,
    devices: NonNullable<AdminFamilyInput['devices']>,
    at: string,
    changed: Set<string>,
    removed: { familyId: string; deviceId: string }[],
  ): Promise<void> {
    await reconcileList(devices.map((d) => d.deviceId), {
      present: await repo.listDevices(trx, familyId),
      idOf: (row) => row.device_id,
      find: (deviceId) => repo.findDevice(trx, deviceId),
      isHere: (row) => row.family_id === familyId,
      async leave(row) {
        await repo.deleteDevice(trx, row.device_id);
        await repo.addEvent(trx, familyId, 'device-removed', at, { deviceId: row.device_id });
        removed.push({ familyId, deviceId: row.device_id });
      },
      stay: (row, position) => repo.updateDevicePosition(trx, row.device_id, position),
      async moveIn(deviceId, position, previous) {
        if (previous) {
          await repo.deleteDevice(trx, deviceId);
          changed.add(previous.family_id);
          await repo.addEvent(trx, previous.family_id, 'device-removed', at, { deviceId });
          removed.push({ familyId: previous.family_id, deviceId });
        }
        await repo.insertDevice(trx, { device_id: deviceId, family_id: familyId, added_at: at, position });
        await repo.addEvent(trx, familyId, 'device-added', at, { deviceId });
      },
    });
  }
}
