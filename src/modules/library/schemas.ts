import { Type } from '@sinclair/typebox';
import { QueryFlag, Timestamp } from '../../shared/schemas.js';

export const AddToLibraryBody = Type.Object({
  cardId: Type.String({ minLength: 1, maxLength: 128, description: 'the card to add' }),
});

export const LibraryRecord = Type.Object(
  {
    _id: Type.String(),
    cardId: Type.String(),
    createdAt: Timestamp,
    familyId: Type.String(),
    provenanceId: Type.String({ description: 'the user who added the card' }),
    reason: Type.String({ examples: ['USER_ADD'] }),
    updatedAt: Timestamp,
  },
  { $id: 'LibraryRecord', title: 'LibraryRecord' },
);

export const RecordEnvelope = Type.Object({ record: Type.Ref('LibraryRecord') });

export const LibraryQuery = Type.Object({
  showdeleted: QueryFlag('Adds the records whose card was deleted.'),
  view: Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.String())], {
      description: '`groups` adds the family\'s groups, each with `cards: []`; anything else is ignored.',
      examples: ['groups'],
    }),
  ),
});

const LibraryEntry = Type.Object({
  cardId: Type.String(),
  addedAt: Timestamp,
  inFamilyLibrary: Type.Boolean({
    description: 'false for a family member\'s MYO card, which is in the library by being theirs and cannot be removed',
  }),
  card: Type.Ref('CardSummary'),
});

export const LibraryList = Type.Object({
  cards: Type.Array(LibraryEntry),
  groups: Type.Optional(Type.Array(Type.Ref('Group'), { description: 'with `view=groups`; each with `cards: []`' })),
  subscriptions: Type.Array(Type.Unknown(), { description: 'always empty: Cardshelf has no subscriptions' }),
});
