import type { CardRow } from '../../db/database.js';
import { bumpCounters, readCounters, scopes } from '../../db/change-counters.js';
import type { Store } from '../../db/dialect.js';
import { inUnitOfWork, userLock, type CommitStep, type Db, type Trx } from '../../db/unit-of-work.js';
import { requireMatch, type Precondition, type Tagger } from '../../shared/entity-tag.js';
import { now } from '../../shared/clock.js';
import { AppError, badRequest, notFound } from '../../shared/errors.js';
import { newCardId } from '../../shared/ids.js';
import { asRawJson, wrapRaw, type RawJson } from '../../shared/raw-json.js';
import { publish } from '../events/publish.js';
import { familyIdOfUser } from '../families/queries.js';
import { publishCatalogueCardShown } from '../library/live-events.js';
import type { FamilyService } from '../families/service.js';
import { mayReadCard } from './access.js';
import { buildCardDoc, cardRow, mergeUpdate } from './card-document.js';
import { findCard, findCardHead, type CardHead } from './queries.js';
import * as repo from './repository.js';
import type { AdminCardInput, CardDoc, CardInput } from './schemas.js';

/** A card answer and its entity tag. */
export interface TaggedCard {
  card: RawJson;
  tag: string;
}

/** A saved card: `created` tells a create from an update. */
export type SavedCard = TaggedCard & { created: boolean };

export interface CardService {
  /** The entity tag of `listMineTagged` (from the user's cards counter, without reading the cards). */
  listTag(userId: string, showDeleted: boolean): Promise<string>;
  /** `{"cards": [...]}`, the caller's MYO cards in list form, and its tag, read in one statement. */
  listMineTagged(userId: string, showDeleted: boolean): Promise<{ tag: string; body: RawJson }>;
  /**
   * `{"card": ...}` with chapters, if the caller may read it; otherwise not-found. `access`
   * tells who vouches for the card's media references (media/read-rights.ts).
   */
  read(userId: string, cardId: string): Promise<TaggedCard & { access: Pick<CardRow, 'user_id' | 'origin'> }>;
  /** The tag `read` would answer with, without reading the card's document; not-found as `read`. */
  readTag(userId: string, cardId: string): Promise<string>;
  /**
   * Creates (no cardId) or updates (the caller's cardId) a MYO card; an update changes the
   * top-level fields sent, the others keep their values (card-document.ts, mergeUpdate). An
   * update with a precondition (`If-Match`) that no longer holds changes nothing (412).
   * `alsoCommit` commits with the save (unit-of-work.ts).
   */
  save(
    userId: string,
    input: CardInput,
    precondition?: Precondition,
    alsoCommit?: CommitStep<SavedCard>,
  ): Promise<SavedCard>;
  /** Soft-deletes one of the caller's MYO cards. */
  remove(userId: string, cardId: string): Promise<void>;
  /** Creates or replaces a catalogue card. */
  adminPut(cardId: string, input: AdminCardInput): Promise<SavedCard>;
}

const MAX_ID_ATTEMPTS = 8;

/**
 * Completes a card's tracks from stored media (see media/track-media.ts) before it is saved;
 * it reads through `db`, the transaction the save runs in, if any.
 */
export type TrackFiller = (db: Db, doc: CardDoc) => Promise<void>;

export function createCardService(
  store: Store,
  families: FamilyService,
  tagger: Tagger,
  fillTracks: TrackFiller = async () => {},
): CardService {
  const { db } = store;

  const ownLists = { all: repo.ownListReads(db, true), live: repo.ownListReads(db, false) };
  const listTagOf = (userId: string, showDeleted: boolean, version: number): string =>
    tagger.tag(['cards-mine', userId, showDeleted, version]);
  const cardList = (members: string): RawJson => wrapRaw('cards', `[${members}]`);

  /** A card's answer (`GET /content/{id}`, `/card/{id}`) depends on its row alone. */
  const cardTag = (cardId: string, version: number): string => tagger.tag(['card', cardId, version]);

  /**
   * A MYO card's write changes its owner's list, and what the owner's family shows (the library
   * and groups hold every member's MYO cards). The owner's lock keeps the membership still
   * until the write commits (families/service.ts takes it to move a user), so the owner's family
   * (`familyId`, read with the card's first statements) is the one the write changes.
   *
   * `written` is the card's own write, sent just before: the counters' bump goes out with it
   * (after it: its row locks are the unit's last but the event's), and the event with the commit.
   */
  async function ownerChanged<W>(
    trx: Trx,
    userId: string,
    familyId: string | undefined,
    written: Promise<W>,
    change: (written: W) => { kind: 'card.created' | 'card.changed' | 'card.deleted'; cardId: string; version: number } | undefined,
  ): Promise<W> {
    const [result] = await Promise.all([written, bumpCounters(trx, [scopes.cards(userId), ...(familyId ? [scopes.family(familyId)] : [])])]);
    const changed = change(result);
    if (!changed) return result;
    // The family sees its members' MYO cards (its library and groups); a user without one alone.
    await publish(trx, store.dialect, {
      kind: changed.kind,
      audience: familyId ? { familyId } : { userId },
      ids: { cardId: changed.cardId, userId },
      read: `/content/${changed.cardId}`,
      tag: cardTag(changed.cardId, changed.version),
    });
    return result;
  }

  /** The card (or its head) if `userId` may read it; a refusal is a not-found, as a missing card. */
  async function readable<C extends CardHead>(userId: string, cardId: string, card: C | undefined): Promise<C> {
    if (!card || !(await mayReadCard(store, families, userId, card))) throw notFound(`card ${cardId}`);
    return card;
  }

  async function create(userId: string, input: CardInput, alsoCommit?: CommitStep<SavedCard>): Promise<SavedCard> {
    const at = now();
    return inUnitOfWork(
      store,
      [userLock(userId)],
      async (trx) => {
        const familyId = await familyIdOfUser(trx, userId);
        for (let attempt = 0; attempt < MAX_ID_ATTEMPTS; attempt++) {
          const doc = buildCardDoc(input, { cardId: newCardId(), userId, createdAt: at, updatedAt: at, deleted: false });
          await fillTracks(trx, doc);
          const row = cardRow(doc, 'myo');
          // 62^5 ids: a collision is rare, and the primary key catches it; then draw again.
          const inserted = await ownerChanged(trx, userId, familyId, repo.insertCard(trx, row), (ok) =>
            ok ? { kind: 'card.created', cardId: doc.cardId, version: 1 } : undefined,
          );
          if (inserted) return { created: true, card: wrapRaw('card', asRawJson(row.doc)), tag: cardTag(doc.cardId, 1) };
        }
        throw new Error('could not find a free card id');
      },
      alsoCommit,
    );
  }

  return {
    async listTag(userId, showDeleted) {
      const [version] = await readCounters(db, [scopes.cards(userId)]);
      return listTagOf(userId, showDeleted, version ?? 0);
    },

    async listMineTagged(userId, showDeleted) {
      const read = showDeleted ? ownLists.all : ownLists.live;
      const { version, members } = await read.listWithVersion(db, scopes.cards(userId), userId);
      return { tag: listTagOf(userId, showDeleted, version), body: cardList(members) };
    },

    async read(userId, cardId) {
      const card = await readable(userId, cardId, await findCard(db, cardId));
      return {
        card: wrapRaw('card', card.doc),
        tag: cardTag(cardId, card.version),
        access: { user_id: card.user_id, origin: card.origin },
      };
    },

    async readTag(userId, cardId) {
      const head = await readable(userId, cardId, await findCardHead(db, cardId));
      return cardTag(cardId, head.version);
    },

    async save(userId, input, precondition, alsoCommit) {
      if (input.cardId === undefined || input.cardId === null || input.cardId === '') {
        // Only an update may leave the title out (it keeps the stored one).
        if (input.title === undefined) throw badRequest("body must have required property 'title'");
        // No card exists yet for an If-Match to name (RFC 9110 13.1.1).
        requireMatch(precondition, '', 'the card to create');
        return create(userId, input, alsoCommit);
      }
      const cardId = input.cardId;
      return inUnitOfWork(
        store,
        [userLock(userId)],
        async (trx) => {
          const [card, familyId] = await Promise.all([findCard(trx, cardId), familyIdOfUser(trx, userId)]);
          if (!card || card.origin !== 'myo' || card.user_id !== userId) throw notFound(`card ${cardId}`);
          if (card.deleted === 1) throw badRequest(`card ${cardId} is deleted and cannot be updated`);
          // Read under the owner's lock: no other write of this card can come between.
          requireMatch(precondition, cardTag(cardId, card.version), `card ${cardId}`);
          const doc = buildCardDoc(mergeUpdate(JSON.parse(card.doc) as CardDoc, input), {
            cardId,
            userId,
            createdAt: card.created_at,
            updatedAt: now(),
            deleted: false,
          });
          await fillTracks(trx, doc);
          const row = cardRow(doc, 'myo');
          const version = await ownerChanged(trx, userId, familyId, repo.updateCard(trx, cardId, row), (v) => ({ kind: 'card.changed', cardId, version: v }));
          return { created: false, card: wrapRaw('card', row.doc), tag: cardTag(cardId, version) };
        },
        alsoCommit,
      );
    },

    async remove(userId, cardId) {
      await inUnitOfWork(store, [userLock(userId)], async (trx) => {
        const [card, familyId] = await Promise.all([findCard(trx, cardId), familyIdOfUser(trx, userId)]);
        if (!card || card.origin !== 'myo' || card.user_id !== userId) throw notFound(`card ${cardId}`);
        if (card.deleted === 1) return;
        const doc = JSON.parse(card.doc) as CardDoc;
        const row = cardRow({ ...doc, deleted: true, updatedAt: now() }, 'myo');
        await ownerChanged(trx, userId, familyId, repo.updateCard(trx, cardId, row), (version) => ({ kind: 'card.deleted', cardId, version }));
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
        const version = existing ? await repo.updateCard(trx, cardId, row) : 1;
        if (!existing) await repo.insertCard(trx, row);
        // Any family's library and groups may show a catalogue card.
        await bumpCounters(trx, [scopes.catalogue]);
        // Deleted (or brought back), it leaves (or re-enters) the libraries holding it.
        const shown = row.deleted === 0;
        if (existing && (existing.deleted === 0) !== shown) await publishCatalogueCardShown(trx, store, tagger, cardId, shown);
        return { created: !existing, card: wrapRaw('card', row.doc), tag: cardTag(cardId, version) };
      });
    },
  };
}
