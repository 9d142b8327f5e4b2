import { familyScope, readCounters, type FamilyScope } from '../../db/change-counters.js';
import type { Store } from '../../db/dialect.js';
import type { Trx } from '../../db/unit-of-work.js';
import type { Tagger } from '../../shared/entity-tag.js';
import { publishAll } from '../events/publish.js';
import * as repo from './repository.js';

/**
 * The library's live events, `library.added` and `library.removed` (docs/api.md, "Live
 * events"): a library record's card entering or leaving what a family's library shows. A
 * member's MYO card enters and leaves with `card.created` and `card.deleted` instead (the card
 * is the news there), and a member moving with `family.changed`.
 */

/** The forms of `GET /card/family/library`: `showdeleted=true`, `view=groups`. */
export interface LibraryForm {
  showDeleted: boolean;
  withGroups: boolean;
}

/** The form the events name the tag of: the plain `GET /card/family/library`. */
const PLAIN: LibraryForm = { showDeleted: false, withGroups: false };

/** The scopes whose counters a form of the library shows. */
export const scopesShown = ({ withGroups }: LibraryForm): FamilyScope[] => ['family', 'catalogue', ...(withGroups ? (['groups'] as const) : [])];

/** The library's tag: the family, the form asked for, and the counters of what it shows. */
export const libraryTag = (tagger: Tagger, familyId: string, { showDeleted, withGroups }: LibraryForm, counters: number[]): string =>
  tagger.tag(['library', familyId, showDeleted, withGroups, ...counters]);

/** One record's card entering or leaving a family's library. */
export interface LibraryChange {
  kind: 'library.added' | 'library.removed';
  familyId: string;
  cardId: string;
  recordId: string;
}

/**
 * Publishes `changes` in the caller's transaction, after its counters were bumped: each names
 * the tag its family's plain library answers with once the transaction commits.
 */
export async function publishLibraryChanges(trx: Trx, store: Store, tagger: Tagger, changes: readonly LibraryChange[]): Promise<void> {
  const events = [];
  for (const { kind, familyId, cardId, recordId } of changes) {
    const counters = await readCounters(trx, scopesShown(PLAIN).map((kind) => familyScope(kind, familyId)));
    events.push({
      kind,
      audience: { familyId },
      ids: { cardId, recordId },
      read: '/card/family/library',
      tag: libraryTag(tagger, familyId, PLAIN, counters),
    });
  }
  await publishAll(trx, store.dialect, events);
}

/**
 * A catalogue card an operator deleted (or brought back) leaves (or re-enters) every library
 * holding a record of it: `library.removed` (or `library.added`) to each such family.
 */
export async function publishCatalogueCardShown(trx: Trx, store: Store, tagger: Tagger, cardId: string, shown: boolean): Promise<void> {
  const records = await repo.recordsOfCard(trx, cardId);
  await publishLibraryChanges(
    trx,
    store,
    tagger,
    records.map((r) => ({ kind: shown ? 'library.added' : 'library.removed', familyId: r.family_id, cardId, recordId: r.record_id })),
  );
}
