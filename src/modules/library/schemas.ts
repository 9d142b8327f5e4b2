import { Type } from '@sinclair/typebox';
import { Timestamp } from '../../shared/schemas.js';

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

export const LibraryList = Type.Object({
  cards: Type.Array(
    Type.Object({ cardId: Type.String(), addedAt: Timestamp, card: Type.Ref('CardSummary') }),
  ),
});
