import type { DeviceRow, FamilyRow, MembershipRow } from '../../db/database.js';
import type { Family } from './schemas.js';

/** The family rules of the interface and DECISIONS.md ("Family"), as pure functions. */

/** A family with no devices and no members is a stub family. */
export const isStub = (family: Pick<Family, 'members' | 'devices'>): boolean =>
  family.members.length === 0 && family.devices.length === 0;

/** The family as the interface shows it, from its rows. */
export function familyView(family: FamilyRow, members: MembershipRow[], devices: Pick<DeviceRow, 'device_id' | 'added_at'>[]): Family {
  return {
    familyId: family.family_id,
    country: family.country,
    createdAt: family.created_at,
    devices: devices.map((d) => ({ deviceId: d.device_id, addedAt: d.added_at })),
    flags: { sharingOn: false, ...(JSON.parse(family.flags) as Record<string, unknown>) },
    members: members.map(memberView),
  };
}

/** A member: `approvedAt` only when approved, `verifiedEmail` only when verified. */
export function memberView(m: MembershipRow): Family['members'][number] {
  return {
    userId: m.user_id,
    addedAt: m.added_at,
    approved: m.approved === 1,
    ...(m.approved === 1 && m.approved_at ? { approvedAt: m.approved_at } : {}),
    verified: m.verified === 1,
    ...(m.verified === 1 && m.verified_email ? { verifiedEmail: m.verified_email } : {}),
  };
}

/**
 * When a member is (re)listed: approved now and before keeps the first approval time; approved
 * now only, the time is `at`; not approved, none.
 */
export function approvalTime(approved: boolean, previous: { approved: boolean; approvedAt: string | null } | undefined, at: string): string | null {
  if (!approved) return null;
  return previous?.approved && previous.approvedAt ? previous.approvedAt : at;
}

/** The first value listed twice, if any. */
export function firstDuplicate(values: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) return v;
    seen.add(v);
  }
  return undefined;
}
