import type { Static } from '@sinclair/typebox';
import type { LibraryRecordRow } from '../../db/database.js';
import { bumpCounters, scopes } from '../../db/change-counters.js';
import type { Store } from '../../db/dialect.js';
import { inUnitOfWork, type CommitStep, type Db, type Trx } from '../../db/unit-of-work.js';
import type { TaggedRead, Tagger } from '../../shared/entity-tag.js';
import { now } from '../../shared/clock.js';
import { AppError, notFound } from '../../shared/errors.js';
import { rawArray, rawObject, withRaw, type RawJson } from '../../shared/raw-json.js';
import { cardVisibleTo } from '../cards/access.js';
import type { FamilyService } from '../families/service.js';
import type { GroupService } from '../groups/service.js';
import { heldCards, holds } from './holdings.js';
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
      // A user without a family gets their (stub) family, which holds nothing yet, and the add
      // runs again; an add that lost the race to write the record answers with the winner's.
      for (;;) {
        const plan = await addOnce(userId, cardId, alsoCommit);
        if (plan === 'no-family') await families.ensureFamilyId(userId);
        else if ('lostTo' in plan) {
          // A concurrent first add of the card wrote the record first, and this one rolled back.
          const existing = await repo.findRecord(db, plan.lostTo, cardId);
          if (existing) return { created: false, record: recordView(existing) };
        } else return plan;
      }
    },
  };

  /**
   * One try at an add: its answer, or why there is none yet (the caller has no family; a
   * concurrent add of the card won). Its one read decides; only an add that writes a record opens a
   * transaction's writes, and only that one runs `alsoCommit`.
   *
   * Where statements pipeline (PostgreSQL), the read goes out with the `begin`, in one round trip,
   * and the insert, history, bump and counters' read in the next, sent together: three round
   * trips with the event and the commit. Elsewhere (SQLite, where a transaction takes the write
   * lock at its `begin`), the read goes before it, so that a repeated add, the common case, never
   * takes the lock.
   */
  async function addOnce(userId: string, cardId: string, alsoCommit?: CommitStep<AddedRecord>): Promise<AddedRecord | 'no-family' | { lostTo: string }> {
    try {
      if (store.dialect.pipelined) {
        return await inUnitOfWork(
          store,
          [],
          async (trx) => {
            const plan = await planAdd(trx, userId, cardId);
            return 'familyId' in plan ? insertRecord(trx, plan.familyId, userId, cardId) : plan.answer;
          },
          // Only an add that created the record has something to commit with it.
          async (trx, result) => {
            if (result !== 'no-family' && result.created) await alsoCommit?.(trx, result);
          },
        );
      }
      const plan = await planAdd(db, userId, cardId);
      if (!('familyId' in plan)) return plan.answer;
      return await inUnitOfWork(store, [], (trx) => insertRecord(trx, plan.familyId, userId, cardId), alsoCommit);
    } catch (err) {
      if (err instanceof LostRace) return { lostTo: err.familyId };
      throw err;
    }
  }

  /**
   * What an add's read decides: an answer without a write (the card is held already), or the
   * family a record is to be written in.
   */
  async function planAdd(reader: Db, userId: string, cardId: string): Promise<AddPlan> {
    const facts = await repo.addFacts(reader, userId, cardId);
    const card = facts?.card;
    const familyId = facts?.familyId;
    // Only a MYO card needs to know whether the caller may read it (rules.ts): the one policy,
    // asked of the family just read.
    const readable =
      card?.origin === 'myo' &&
      card.deleted === 0 &&
      (await cardVisibleTo(userId, card, async (id) => familyId !== undefined && (await holds(reader, familyId, id))));
    const verdict = addability(card, readable);
    if (verdict === 'not-found') throw notFound(`card ${cardId}`);
    if (verdict === 'not-eligible') {
      throw new AppError(
        'card-not-eligible',
        `card ${cardId} is neither free nor in the club subscription, so it cannot be added to a family library`,
      );
    }
    if (familyId === undefined) return { answer: 'no-family' };
    if (verdict === 'held-as-family-content' && card) {
      return { answer: { created: false, record: recordView(familyContentRecord(familyId, card)) } };
    }
    // A card already there (the common repeat) is answered from that read.
    if (facts?.record) return { answer: { created: false, record: recordView(facts.record) } };
    return { familyId };
  }

  /**
   * Writes the family's record of the card, with its history, the bump and the event, all sent
   * together: no lock, the unique key (family, card) decides which of concurrent adds creates the
   * record, and the one that did not rolls back all it sent (LostRace).
   */
  async function insertRecord(trx: Trx, familyId: string, userId: string, cardId: string): Promise<AddedRecord> {
    const at = now();
    const row = newLibraryRecord(familyId, cardId, userId, at);
    // The event's tag reads the counters after the bump, in the same round trip.
    const [inserted] = await Promise.all([
      repo.insertRecordIfAbsent(trx, row),
      families.recordEvent(trx, familyId, 'card-added', at, { cardId, userId }),
      bumpCounters(trx, [scopes.family(familyId)]),
      publishLibraryChanges(trx, store, tagger, [{ kind: 'library.added', familyId, cardId, recordId: row.record_id }]),
    ]);
    if (!inserted) throw new LostRace(familyId);
    return { created: true, record: recordView(row) };
  }
}

/** What an add's read decides (planAdd). */
type AddPlan = { answer: AddedRecord | 'no-family' } | { familyId: string };

/** A concurrent add of the card wrote the family's record first: this add's writes roll back. */
class LostRace extends Error {
  constructor(readonly familyId: string) {
    super('a concurrent add wrote the library record first');
  }
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
