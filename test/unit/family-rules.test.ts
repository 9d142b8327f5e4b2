import { describe, expect, it } from 'vitest';
import type { DeviceRow, FamilyRow, MembershipRow } from '../../src/db/database.js';
import { approvalTime, familyView, firstDuplicate, isStub, memberView } from '../../src/modules/families/rules.js';

const T1 = '2026-01-01T00:00:00.000Z';
const T2 = '2026-02-01T00:00:00.000Z';
const T3 = '2026-03-01T00:00:00.000Z';

const familyRow = (flags = '{"sharingOn":true}'): FamilyRow => ({
  family_id: 'fam1',
  country: 'DE',
  flags,
  created_at: T1,
  updated_at: T2,
});

const member = (over: Partial<MembershipRow> = {}): MembershipRow => ({
  user_id: 'auth0|m',
  family_id: 'fam1',
  listed: 1,
  added_at: T1,
  approved: 0,
  approved_at: null,
  verified: 0,
  verified_email: null,
  position: 0,
  ...over,
});

const device = (id: string): Pick<DeviceRow, 'device_id' | 'added_at'> => ({ device_id: id, added_at: T2 });

describe('memberView', () => {
  it('shows approvedAt only for an approved member', () => {
    expect(memberView(member({ approved: 1, approved_at: T2 }))).toEqual({
      userId: 'auth0|m',
      addedAt: T1,
      approved: true,
      approvedAt: T2,
      verified: false,
    });
    expect(memberView(member({ approved: 0, approved_at: T2 }))).not.toHaveProperty('approvedAt');
  });

  it('shows verifiedEmail only for a verified member', () => {
    expect(memberView(member({ verified: 1, verified_email: 'm@example.com' }))).toEqual({
      userId: 'auth0|m',
      addedAt: T1,
      approved: false,
      verified: true,
      verifiedEmail: 'm@example.com',
    });
    const unverified = memberView(member({ verified: 0, verified_email: 'm@example.com' }));
    expect(unverified).not.toHaveProperty('verifiedEmail');
    expect(unverified.verified).toBe(false);
    expect(memberView(member({ verified: 1, verified_email: null }))).not.toHaveProperty('verifiedEmail');
  });
});

describe('familyView', () => {
  it('maps the rows to the interface shape', () => {
    const view = familyView(familyRow(), [member({ user_id: 'auth0|a' }), member({ user_id: 'auth0|b' })], [device('d1')]);
    expect(view).toEqual({
      familyId: 'fam1',
      country: 'DE',
      createdAt: T1,
      devices: [{ deviceId: 'd1', addedAt: T2 }],
      flags: { sharingOn: true },
      members: [
        { userId: 'auth0|a', addedAt: T1, approved: false, verified: false },
        { userId: 'auth0|b', addedAt: T1, approved: false, verified: false },
      ],
    });
  });

  it('defaults sharingOn to false and keeps other flags', () => {
    expect(familyView(familyRow('{}'), [], []).flags).toEqual({ sharingOn: false });
    expect(familyView(familyRow('{"beta":1}'), [], []).flags).toEqual({ sharingOn: false, beta: 1 });
  });
});

describe('isStub', () => {
  it('is a family with no members and no devices', () => {
    expect(isStub({ members: [], devices: [] })).toBe(true);
    expect(isStub(familyView(familyRow(), [member()], []))).toBe(false);
    expect(isStub(familyView(familyRow(), [], [device('d')]))).toBe(false);
  });
});

describe('approvalTime', () => {
  it('is null for a member not approved', () => {
    expect(approvalTime(false, { approved: true, approvedAt: T1 }, T3)).toBeNull();
    expect(approvalTime(false, undefined, T3)).toBeNull();
  });

  it('keeps the first approval time of a member approved before', () => {
    expect(approvalTime(true, { approved: true, approvedAt: T1 }, T3)).toBe(T1);
  });

  it('is now for a newly approved member', () => {
    expect(approvalTime(true, { approved: false, approvedAt: null }, T3)).toBe(T3);
    expect(approvalTime(true, undefined, T3)).toBe(T3);
    // approved before but without a recorded time: now
    expect(approvalTime(true, { approved: true, approvedAt: null }, T3)).toBe(T3);
  });
});

describe('firstDuplicate', () => {
  it('finds the first value listed twice', () => {
    expect(firstDuplicate(['a', 'b', 'c', 'b', 'a'])).toBe('b');
    expect(firstDuplicate(['x', 'x'])).toBe('x');
  });

  it('is undefined when all values differ (case matters)', () => {
    expect(firstDuplicate([])).toBeUndefined();
    expect(firstDuplicate(['a', 'A', 'b'])).toBeUndefined();
  });
});
