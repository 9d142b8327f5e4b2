import type { Static } from '@sinclair/typebox';
import type { LibraryRecordRow } from '../../db/database.js';
import type { Store } from '../../db/dialect.js';
import { now } from '../../shared/clock.js';
import { AppError, notFound } from '../../shared/errors.js';
import { rawArray, withRaw, wrapRaw, type RawJson } from '../../shared/raw-json.js';
import { findCard } from '../cards/repository.js';
import type { FamilyService } from '../families/service.js';
import * as repo from './repository.js';
import { addability, newLibraryRecord } from './rules.js';
import type { LibraryRecord } from './schemas.js';

type RecordView = Static<typeof LibraryRecord>;

export interface LibraryService {
  /** Adds a card to the caller's family library; `created` is false when it was there already. */
  add(userId: string, cardId: string): Promise<{ created: boolean; record: RecordView }>;
  /** `{"cards": [{cardId, addedAt, card}]}` for the caller's family. */
  list(userId: string): Promise<RawJson>;
}

export function createLibraryService(store: Store, families: FamilyService): LibraryService {
  const { db } = store;
  return {
    async add(userId, cardId) {
      const card = await findCard(db, cardId);
      // Only another user's MYO card needs to know whether the family holds it (rules.ts).
      const othersMyo = card?.origin === 'myo' && card.user_id !== userId;
      const familyOfCaller = othersMyo ? await families.findFamilyId(userId) : undefined;
      const held = familyOfCaller !== undefined && (await repo.holdsCard(db, familyOfCaller, cardId));
      const verdict = addability(card, userId, held);
      // Another user's MYO card answers like a missing one: its existence is not revealed.
      if (verdict === 'not-found') throw notFound(`card ${cardId}`);
      if (verdict === 'not-eligible') {
        throw new AppError(
          'card-not-eligible',
          `card ${cardId} is neither free nor in the club subscription, so it cannot be added to a family library`,
        );
      }
      const familyId = await families.ensureFamilyId(userId);
      // A card already there (the common repeat) is answered from a read, without taking the
      // write lock; the transaction below settles the race between first adds.
      const present = await repo.findRecord(db, familyId, cardId);
      if (present) return { created: false, record: recordView(present) };
      return db.transaction().execute(async (trx) => {
        const at = now();
        const row = newLibraryRecord(familyId, cardId, userId, at);
        // The unique key (family, card) decides which of concurrent adds creates the record.
        if (await repo.insertRecordIfAbsent(trx, row)) {
          await families.recordEvent(trx, familyId, 'card-added', at, { cardId, userId });
          return { created: true, record: recordView(row) };
        }
        const existing = await repo.findRecord(trx, familyId, cardId);
        if (!existing) throw new Error(`library record of ${cardId} vanished during an add`);
        return { created: false, record: recordView(existing) };
      });
    },

    async list(userId) {
      const familyId = await families.findFamilyId(userId);
      const rows = familyId ? await repo.listWithSummaries(db, familyId) : [];
      return wrapRaw(
        'cards',
        rawArray(rows.map((r) => withRaw({ cardId: r.card_id, addedAt: r.created_at }, { card: r.summary }))),
      );
    },
  };
}

function recordView(row: LibraryRecordRow): RecordView {
  return {
    _id: row.record_id,
    cardId: row.card_id,
    createdAt: row.created_at,
    familyId: row.family_id,
    provenanceId: row.provenance_id,
    reason: row.reason,
    updatedAt: row.updated_at,
  };
}
