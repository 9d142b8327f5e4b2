import { Type, type Static } from '@sinclair/typebox';
import { Nullable, QueryFlag, Timestamp } from '../../shared/schemas.js';

export const Member = Type.Object({
  userId: Type.String({ description: 'the member\'s user id (token `sub`)' }),
  addedAt: Timestamp,
  approved: Type.Boolean(),
  approvedAt: Type.Optional(Timestamp),
  verified: Type.Boolean(),
  verifiedEmail: Type.Optional(Type.String()),
});

/** `GET /user/family/members`: a member as the family's own pages show them (docs/api.md, "Family"). */
export const NamedMember = Type.Composite(
  [
    Member,
    Type.Object({
      displayName: Nullable(Type.String({ description: "the name of the member's account on this server; null when they sign in elsewhere" })),
      self: Type.Boolean({ description: 'whether this member is the caller' }),
    }),
  ],
  { $id: 'NamedMember', title: 'NamedMember' },
);
export type NamedMember = Static<typeof NamedMember>;
export const NamedMemberList = Type.Object({ members: Type.Array(Type.Ref('NamedMember')) });
export const NamedMemberEnvelope = Type.Object({ member: Type.Ref('NamedMember') });
export const MemberParams = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 256, description: "the member's user id" }) });
export const MemberChange = Type.Object({ approved: Type.Literal(true, { description: 'approves a member waiting for approval' }) }, { additionalProperties: false });

export const Device = Type.Object({ deviceId: Type.String(), addedAt: Timestamp });

export const FamilyEvent = Type.Object(
  {
    type: Type.String({ examples: ['family-created', 'member-added', 'card-added', 'group-updated'] }),
    at: Timestamp,
  },
  { additionalProperties: true, description: 'an event, with its details beside type and at' },
);

export const Family = Type.Object(
  {
    familyId: Type.String(),
    country: Type.String({ description: 'two-letter country code' }),
    createdAt: Timestamp,
    devices: Type.Array(Device),
    flags: Type.Object({ sharingOn: Type.Boolean() }, { additionalProperties: true }),
    members: Type.Array(Member),
    history: Type.Optional(Type.Array(FamilyEvent)),
  },
  { $id: 'Family', title: 'Family' },
);
export type Family = Static<typeof Family>;

export const FamilyQuery = Type.Object({
  showhistory: QueryFlag("Adds the family's events, oldest first, as `history`."),
  allowStub: QueryFlag('Returns the family even when it has no members and no devices.'),
});

export const FamilyEnvelope = Type.Object({ family: Nullable(Type.Ref('Family')) });
export const AdminFamilyEnvelope = Type.Object({ family: Type.Ref('Family') });

export const AdminFamilyInput = Type.Object(
  {
    country: Type.String({ pattern: '^[A-Za-z]{2}$' }),
    flags: Type.Optional(Type.Object({ sharingOn: Type.Optional(Type.Boolean()) })),
    members: Type.Optional(
      Type.Array(
        Type.Object({
          userId: Type.String({ minLength: 1, maxLength: 256 }),
          approved: Type.Optional(Type.Boolean()),
          verified: Type.Optional(Type.Boolean()),
          verifiedEmail: Type.Optional(Type.String({ maxLength: 320 })),
        }),
        { maxItems: 100 },
      ),
    ),
    devices: Type.Optional(
      Type.Array(Type.Object({ deviceId: Type.String({ minLength: 1, maxLength: 256 }) }), { maxItems: 100 }),
    ),
  },
  { title: 'AdminFamilyInput' },
);
export type AdminFamilyInput = Static<typeof AdminFamilyInput>;
