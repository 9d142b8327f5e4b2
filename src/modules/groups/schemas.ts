import { Type, type Static } from '@sinclair/typebox';
import { PathId, Timestamp } from '../../shared/schemas.js';
import { MAX_GROUP_NAME_LENGTH } from './rules.js';

const Items = Type.Array(Type.Object({ contentId: Type.String({ minLength: 1, maxLength: 128 }) }), {
  maxItems: 1000,
  description: 'kept in order; duplicates and cards not in the family library are dropped',
});
const Name = Type.String({ minLength: 1, description: `cut to ${MAX_GROUP_NAME_LENGTH} characters` });
const ImageId = Type.String({ minLength: 1, maxLength: 256 });

export const CreateGroupBody = Type.Object(
  { name: Name, imageId: ImageId, items: Type.Optional(Items) },
  { title: 'CreateGroup' },
);
export type CreateGroupBody = Static<typeof CreateGroupBody>;

/** Fields left out keep their values. */
export const UpdateGroupBody = Type.Object(
  { name: Type.Optional(Name), imageId: Type.Optional(ImageId), items: Type.Optional(Items) },
  { title: 'UpdateGroup' },
);
export type UpdateGroupBody = Static<typeof UpdateGroupBody>;

export const GroupParams = Type.Object({ groupId: PathId('the group id') });

export const Group = Type.Object(
  {
    id: Type.String(),
    familyId: Type.String(),
    name: Type.String(),
    imageId: Type.String(),
    imageUrl: Type.String(),
    items: Type.Array(Type.Object({ contentId: Type.String(), addedAt: Timestamp })),
    cards: Type.Array(Type.Ref('Card'), { description: 'the full card of each item, in item order' }),
    createdAt: Timestamp,
    lastModifiedAt: Timestamp,
  },
  { $id: 'Group', title: 'Group' },
);

export const GroupList = Type.Array(Type.Ref('Group'));
export const DeletedGroup = Type.Object({ id: Type.String() });
