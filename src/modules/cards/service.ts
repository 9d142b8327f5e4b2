import type { Store } from '../../db/dialect.js';
import type { Db } from '../../db/unit-of-work.js';
import { now } from '../../shared/clock.js';
import { AppError, badRequest, notFound } from '../../shared/errors.js';
import { newCardId } from '../../shared/ids.js';
import { asRawJson, rawArray, wrapRaw, type RawJson } from '../../shared/raw-json.js';
import type { FamilyService } from '../families/service.js';
import { mayReadCard } from './access.js';
import { buildCardDoc, cardRow, mergeUpdate } from './card-document.js';
import { findCard } from './queries.js';
import * as repo from './repository.js';
import type { AdminCardInput, CardDoc, CardInput } from './schemas.js';

export interface CardService {
  /** `{"cards": [...]}`: the caller's MYO cards in list form. */
  listMine(userId: string, showDeleted: boolean): Promise<RawJson>;
  /** `{"card": ...}` with chapters, if the caller may read it; otherwise not-found. */
  read(userId: string, cardId: string): Promise<RawJson>;
  /**
   * Creates (no cardId) or updates (the caller's cardId) a MYO card; an update changes the
   * top-level fields sent, the others keep their values (card-document.ts, mergeUpdate).
   */
  save(userId: string, input: CardInput): Promise<{ created: boolean; card: RawJson }>;
  /** Soft-deletes one of the caller's MYO cards. */
  remove(userId: string, cardId: string): Promise<void>;
  /** Creates or replaces a catalogue card. */
  adminPut(cardId: string, input: AdminCardInput): Promise<{ created: boolean; card: RawJson }>;
}

const MAX_ID_ATTEMPTS = 8;

/**
 * Completes a card's tracks from stored media (see media/track-media.ts) before it is saved;
 * it reads through `db`, the transaction the save runs in, if any.
 */
export type TrackFiller = (db: Db, doc: CardDoc) => Promise<void>;

export function createCardService(store: Store, families: FamilyService, fillTracks: TrackFiller = async () => {}): CardService {
  const { db } = store;

  async function create(userId: string, input: CardInput): Promise<RawJson> {
    const at = now();
    for (let attempt = 0; attempt < MAX_ID_ATTEMPTS; attempt++) {
      const doc = buildCardDoc(input, { cardId: newCardId(), userId, createdAt: at, updatedAt: at, deleted: false });
      await fillTracks(db, doc);
      const row = cardRow(doc, 'myo');
      // 62^5 ids: a collision is rare, and the primary key catches it; then draw again.
      if (await repo.insertCard(db, row)) return asRawJson(row.doc);
    }
    throw new Error('could not find a free card id');
  }

  return {
    async listMine(userId, showDeleted) {
      return wrapRaw('cards', rawArray(await repo.listSummariesByOwner(db, userId, showDeleted)));
    },

    async read(userId, cardId) {
      const card = await findCard(db, cardId);
      if (!card || !(await mayReadCard(store, families, userId, card))) throw notFound(`card ${cardId}`);
      return wrapRaw('card', card.doc);
    },

    async save(userId, input) {
      if (input.cardId === undefined || input.cardId === null || input.cardId === '') {
        // Only an update may leave the title out (it keeps the stored one).
        if (input.title === undefined) throw badRequest("body must have required property 'title'");
        return { created: true, card: wrapRaw('card', await create(userId, input)) };
      }
      const cardId = input.cardId;
      return db.transaction().execute(async (trx) => {
        const card = await findCard(trx, cardId);
        if (!card || card.origin !== 'myo' || card.user_id !== userId) throw notFound(`card ${cardId}`);
        if (card.deleted === 1) throw badRequest(`card ${cardId} is deleted and cannot be updated`);
        const doc = buildCardDoc(mergeUpdate(JSON.parse(card.doc) as CardDoc, input), {
          cardId,
          userId,
          createdAt: card.created_at,
          updatedAt: now(),
          deleted: false,
        });
        await fillTracks(trx, doc);
        const row = cardRow(doc, 'myo');
        await repo.updateCard(trx, cardId, row);
        return { created: false, card: wrapRaw('card', row.doc) };
      });
    },

    async remove(userId, cardId) {
      await db.transaction().execute(async (trx) => {
        const card = await findCard(trx, cardId);
        if (!card || card.origin !== 'myo' || card.user_id !== userId) throw notFound(`card ${cardId}`);
        if (card.deleted === 1) return;
        const doc = JSON.parse(card.doc) as CardDoc;
        const row = cardRow({ ...doc, deleted: true, updatedAt: now() }, 'myo');
        await repo.updateCard(trx, cardId, row);
      });
    },

    async adminPut(cardId, input) {
      return db.transaction().execute(async (trx) => {
        const existing = await findCard(trx, cardId);
        if (existing && existing.origin === 'myo') {
          throw new AppError('bad-request', `card ${cardId} is a user's MYO card, not a catalogue card`);
        }
        const at = now();
        const doc = buildCardDoc(input, {
          cardId,
          userId: input.userId,
          createdAt: input.createdAt ?? existing?.created_at ?? at,
          updatedAt: at,
          deleted: input.deleted ?? false,
        });
        await fillTracks(trx, doc);
        const row = cardRow(doc, 'catalogue');
        if (existing) await repo.updateCard(trx, cardId, row);
        else await repo.insertCard(trx, row);
        return { created: !existing, card: wrapRaw('card', row.doc) };
      });
    },
  };
}
