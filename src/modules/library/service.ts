import type { Static } from '@sinclair/typebox';
import type { LibraryRecordRow } from '../../db/database.js';
import { bumpCounters, scopes } from '../../db/change-counters.js';
import type { Store } from '../../db/dialect.js';
import { inUnitOfWork, type CommitStep } from '../../db/unit-of-work.js';
import type { TaggedRead, Tagger } from '../../shared/entity-tag.js';
import { now } from '../../shared/clock.js';
import { AppError, notFound } from '../../shared/errors.js';
import { rawArray, rawObject, withRaw, type RawJson } from '../../shared/raw-json.js';
import { mayReadCard } from '../cards/access.js';
import { findCard } from '../cards/queries.js';
import type { FamilyService } from '../families/service.js';
import type { GroupService } from '../groups/service.js';
import { heldCards } from './holdings.js';
import { libraryTag, publishLibraryChanges, scopesShown, type LibraryForm } from './live-events.js';
import * as repo from './repository.js';
import { addability, familyContentRecord, newLibraryRecord } from './rules.js';
import type { LibraryRecord } from './schemas.js';

type RecordView = Static<typeof LibraryRecord>;

/** `showDeleted` (`showdeleted=true`): also the records whose card was deleted; `withGroups` (`view=groups`): also the family's groups, each with `cards: []`. */
export type LibraryListOptions = LibraryForm;

/** The answer of an add: `created` is false when the library held the card already. */
export interface AddedRecord {
  created: boolean;
  record: RecordView;
}

export interface LibraryService {
  /**
   * Adds a card to the caller's family library. `alsoCommit` commits with the add when it
   * writes (unit-of-work.ts); an add answered from a read alone does not run it.
   */
  add(userId: string, cardId: string, alsoCommit?: CommitStep<AddedRecord>): Promise<AddedRecord>;
  /**
   * `{"cards": [{cardId, addedAt, inFamilyLibrary, card}], "subscriptions": []}` for the
   * caller's family: its tag (from change counters), and the answer when it is rendered.
   */
  listRead(userId: string, opts: LibraryListOptions): Promise<TaggedRead>;
}

export function createLibraryService(
  store: Store,
  families: FamilyService,
  groups: Pick<GroupService, 'outlines'>,
  tagger: Tagger,
): LibraryService {
  const { db } = store;

  async function render(familyId: string, { showDeleted, withGroups }: LibraryListOptions): Promise<RawJson> {
    const held = await heldCards(db, familyId, { form: 'summary', includeDeleted: showDeleted });
    const cards = rawArray(
      held.map((c) =>
        withRaw({ cardId: c.cardId, addedAt: c.addedAt, inFamilyLibrary: c.inFamilyLibrary }, { card: c.json }),
      ),
    );
    const members: Record<string, string> = { cards };
    if (withGroups) {
      // A record shown only because of showdeleted is not held: its items stay hidden.
      const live = new Set(held.filter((c) => !c.deleted).map((c) => c.cardId));
      members.groups = await groups.outlines(familyId, live);
    }
    // Cardshelf sells no subscriptions; the public service answers `[]` for "none".
    members.subscriptions = '[]';
    return rawObject(members);
  }

  return {
    async listRead(userId, { showDeleted, withGroups }) {
      // The family's records and members' cards, catalogue cards in it, and its groups if shown.
      const wanted = scopesShown({ showDeleted, withGroups });
      // The caller's own MYO cards are in their library even before they join a family; the
      // family's id and the counters of the tag come from one read.
      const { familyId, counters } = await families.ensureFamilyIdCounted(userId, wanted);
      return {
        tag: libraryTag(tagger, familyId, { showDeleted, withGroups }, counters),
        render: () => render(familyId, { showDeleted, withGroups }),
      };
    },

    async add(userId, cardId, alsoCommit) {
      // The card, and the caller's family with its record of it, read side by side.
      const [card, known] = await Promise.all([findCard(db, cardId), repo.familyRecordOf(db, userId, cardId)]);
      // Only a MYO card needs to know whether the caller may read it (rules.ts).
      const readable =
        card?.origin === 'myo' && card.deleted === 0 && (await mayReadCard(store, families, userId, card));
      const verdict = addability(card, readable);
      if (verdict === 'not-found') throw notFound(`card ${cardId}`);
      if (verdict === 'not-eligible') {
        throw new AppError(
          'card-not-eligible',
          `card ${cardId} is neither free nor in the club subscription, so it cannot be added to a family library`,
        );
      }
      // A user without a family gets their (stub) family here, which holds nothing yet.
      const familyId = known?.familyId ?? (await families.ensureFamilyId(userId));
      if (verdict === 'held-as-family-content' && card) {
        return { created: false, record: recordView(familyContentRecord(familyId, card)) };
      }
      // A card already there (the common repeat) is answered from that read, without taking the
      // write lock; the transaction below settles the race between first adds.
      if (known?.record) return { created: false, record: recordView(known.record) };
      // No lock: the unique key (family, card) decides which of concurrent adds creates the record.
      return inUnitOfWork(
        store,
        [],
        async (trx): Promise<AddedRecord> => {
          const at = now();
          const row = newLibraryRecord(familyId, cardId, userId, at);
          if (await repo.insertRecordIfAbsent(trx, row)) {
            // The history, the bump and the event go out together; the event's tag reads the
            // counters after the bump, in the same round trip.
            await Promise.all([
              families.recordEvent(trx, familyId, 'card-added', at, { cardId, userId }),
              bumpCounters(trx, [scopes.family(familyId)]),
              publishLibraryChanges(trx, store, tagger, [{ kind: 'library.added', familyId, cardId, recordId: row.record_id }]),
            ]);
            return { created: true, record: recordView(row) };
          }
          const existing = await repo.findRecord(trx, familyId, cardId);
          if (!existing) throw new Error(`library record of ${cardId} vanished during an add`);
          return { created: false, record: recordView(existing) };
        },
        alsoCommit,
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
