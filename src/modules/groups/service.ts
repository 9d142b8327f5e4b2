import type { Config } from '../../config.js';
import type { GroupRow } from '../../db/database.js';
import { bumpCounters, bumpCountersWithCommit, familyScope, readCounters, scopes, type FamilyScope } from '../../db/change-counters.js';
import type { Store } from '../../db/dialect.js';
import { requireMatch, type Precondition, type TaggedRead, type Tagger } from '../../shared/entity-tag.js';
import { familyLock, inUnitOfWork, type CommitStep, type Db, type Trx } from '../../db/unit-of-work.js';
import { now } from '../../shared/clock.js';
import { AppError, notFound } from '../../shared/errors.js';
import { newHexId } from '../../shared/ids.js';
import { rawArray, withRaw, type RawJson } from '../../shared/raw-json.js';
import { publish } from '../events/publish.js';
import type { FamilyService } from '../families/service.js';
import { heldCards } from '../library/holdings.js';
import * as repo from './repository.js';
import {
  checkGroupLimit,
  cleanGroupItems,
  cleanGroupName,
  groupImageUrl,
  modificationTime,
  visibleItems,
  type GroupItem as Item,
} from './rules.js';
import type { CreateGroupBody, UpdateGroupBody } from './schemas.js';

/** A group answer and its entity tag. */
export interface TaggedGroup {
  group: RawJson;
  tag: string;
}

export interface GroupService {
  /** `alsoCommit` commits with the create (unit-of-work.ts). */
  create(userId: string, body: CreateGroupBody, alsoCommit?: CommitStep<TaggedGroup>): Promise<TaggedGroup>;
  /** The family's groups: the tag (from change counters), and the answer when it is rendered. */
  listRead(userId: string): Promise<TaggedRead>;
  /** The family's groups, rendered. */
  list(userId: string): Promise<RawJson>;
  /** One group: its tag (its version and counters), and the answer when rendered; 404 when not the caller's family's. */
  read(userId: string, groupId: string): Promise<TaggedRead>;
  /** With a precondition (`If-Match`) that no longer holds, changes nothing (412). */
  update(userId: string, groupId: string, body: UpdateGroupBody, precondition?: Precondition): Promise<TaggedGroup>;
  remove(userId: string, groupId: string): Promise<{ id: string }>;
  /**
   * The family's groups as the library listing shows them with `view=groups`: `cards` empty (as
   * in the public service), `items` those of the cards in `held` (what the library holds).
   */
  outlines(familyId: string, held: ReadonlySet<string>): Promise<RawJson>;
}

/** What a group's answer shows besides its own row (see `groupTag`). */
const GROUP_SCOPES: readonly FamilyScope[] = ['family', 'catalogue'];
/** What the list of groups shows. */
const LIST_SCOPES: readonly FamilyScope[] = ['family', 'groups', 'catalogue'];

export function createGroupService(
  store: Store,
  families: FamilyService,
  config: Pick<Config, 'groupImageUrlTemplate' | 'publicBaseUrl'>,
  tagger: Tagger,
): GroupService {
  const { db } = store;

  /**
   * A group's answer shows its own row, and the cards of its items as the family library holds
   * them: its tag names the group's version, and shows the family's counter (members, their MYO
   * cards, records) and the catalogue's. Another group's write does not change it; a card's
   * does, but If-Match compares the group's own part (shared/entity-tag.ts), so a PUT is
   * refused only when the group itself changed.
   */
  const groupTagOf = (familyId: string, groupId: string, version: number, counters: number[]): string =>
    tagger.tag(['group', familyId, groupId, version], counters);

  /** The list's tag (`GET /card/family/library/groups`): the family's, its groups' and the catalogue's counters. */
  const listTagOf = (familyId: string, counters: number[]): string => tagger.tag(['groups', familyId, ...counters]);

  /** A group's live event, with the new tag of its read, in the write's transaction. */
  const publishGroup = (trx: Trx, kind: 'group.created' | 'group.changed', familyId: string, groupId: string, tag: string) =>
    publish(trx, store.dialect, { kind, audience: { familyId }, ids: { groupId }, read: `/card/family/library/groups/${groupId}`, tag });

  const imageUrl = (imageId: string): string => groupImageUrl(config.groupImageUrlTemplate, imageId, config.publicBaseUrl);

  /** Documents of the given cards that the family library holds, by card id (one query). */
  async function heldDocs(from: Db, familyId: string, cardIds: readonly string[]): Promise<Map<string, string>> {
    const held = await heldCards(from, familyId, { cardIds, form: 'doc' });
    return new Map(held.map((c) => [c.cardId, c.json]));
  }

  /**
   * A group as JSON, its stored `items` those `held` has; `cards` the document of each, in item
   * order (or `[]`).
   */
  function renderRow(row: GroupRow, stored: Item[], held: ReadonlyMap<string, string>, withCards: boolean): RawJson {
    const { items, cards } = visibleItems(stored, held);
    return withRaw(
      {
        id: row.group_id,
        familyId: row.family_id,
        name: row.name,
        imageId: row.image_id,
        imageUrl: imageUrl(row.image_id),
        items,
        createdAt: row.created_at,
        lastModifiedAt: row.last_modified_at,
      },
      { cards: withCards ? rawArray(cards) : '[]' },
    );
  }

  /**
   * The groups of one family as JSON, each with the full cards of its items that the family
   * library holds: from `known` documents when the caller has them, else from one query for all
   * groups. An item whose card the library no longer holds (deleted, or its owner left the
   * family) is not shown; it stays stored, and shows again if the card comes back.
   */
  async function render(rows: GroupRow[], known?: Map<string, string>): Promise<RawJson[]> {
    const [first] = rows;
    if (!first) return [];
    const parsed = rows.map((row) => ({ row, items: JSON.parse(row.items) as Item[] }));
    const docs =
      known ??
      (await heldDocs(db, first.family_id, parsed.flatMap((g) => g.items.map((i) => i.contentId))));
    return parsed.map(({ row, items }) => renderRow(row, items, docs, true));
  }

  async function renderOne(row: GroupRow, known?: Map<string, string>): Promise<RawJson> {
    const [json] = await render([row], known);
    return json as RawJson;
  }

  const missing = (groupId: string): AppError => notFound(`group ${groupId}`);

  async function listRead(userId: string): Promise<TaggedRead> {
    // The family's id and the counters of the tag in one read.
    const found = await families.findFamilyIdCounted(userId, LIST_SCOPES);
    if (!found) return { tag: tagger.tag(['groups', '']), render: () => '[]' as RawJson };
    const { familyId, counters } = found;
    return {
      tag: listTagOf(familyId, counters),
      render: async () => rawArray(await render(await repo.listGroups(db, familyId))),
    };
  }

  return {
    async create(userId, body, alsoCommit) {
      const familyId = await families.ensureFamilyId(userId);
      const name = cleanGroupName(body.name);
      // The count and the insert must not interleave with another create in this family.
      return inUnitOfWork(
        store,
        [familyLock(familyId)],
        async (trx) => {
          const at = now();
          // Read together, behind the lock: the count, the items' cards, the counters of the tag
          // (the family's and the catalogue's, which this write does not change).
          const [count, docs, counters] = await Promise.all([
            repo.countGroups(trx, familyId),
            heldDocs(trx, familyId, (body.items ?? []).map((i) => i.contentId)),
            readCounters(trx, GROUP_SCOPES.map((kind) => familyScope(kind, familyId))),
          ]);
          checkGroupLimit(count);
          const cleaned = { items: cleanGroupItems(body.items ?? [], docs, [], at), docs };
          const group: GroupRow = {
            version: 1,
            group_id: newHexId(),
            family_id: familyId,
            name,
            image_id: body.imageId,
            items: JSON.stringify(cleaned.items),
            created_at: at,
            last_modified_at: at,
          };
          // The writes need none of their answers: all go out with the commit.
          const tag = groupTagOf(familyId, group.group_id, 1, counters);
          await repo.insertGroup(trx, group);
          await families.recordEvent(trx, familyId, 'group-created', at, { groupId: group.group_id, name });
          await bumpCountersWithCommit(trx, [scopes.groups(familyId)]);
          await publishGroup(trx, 'group.created', familyId, group.group_id, tag);
          // Rendered from the documents read in this transaction: it reads nothing more.
          return { group: await renderOne(group, cleaned.docs), tag };
        },
        alsoCommit,
      );
    },

    listRead,

    async list(userId) {
      return (await listRead(userId)).render();
    },

    async read(userId, groupId) {
      // The group (of the caller's family) and the counters of its tag in one read: its version
      // and the counters make the tag, the rest of the row the answer.
      const found = await repo.findGroupOfUserCounted(db, userId, groupId, GROUP_SCOPES);
      if (!found) throw missing(groupId);
      const { row, counters } = found;
      return { tag: groupTagOf(row.family_id, groupId, row.version, counters), render: () => renderOne(row) };
    },

    async update(userId, groupId, body, precondition) {
      const familyId = await families.findFamilyId(userId);
      if (!familyId) throw missing(groupId);
      const name = body.name === undefined ? undefined : cleanGroupName(body.name);
      // Serialised with the family's other group writes, so two PUTs never mix their bodies.
      const { row, docs, tag } = await inUnitOfWork(store, [familyLock(familyId)], async (trx) => {
        // Read together, behind the lock: no other group write comes between the check and the
        // update. The counters are read before the items' cards: the new tag below names them
        // too, so it is never newer than what the answer shows (a card written meanwhile makes
        // the next read's tag differ, and the client fetches again).
        const [current, counters, held] = await Promise.all([
          repo.findGroup(trx, familyId, groupId),
          readCounters(trx, GROUP_SCOPES.map((kind) => familyScope(kind, familyId))),
          body.items === undefined ? undefined : heldDocs(trx, familyId, body.items.map((i) => i.contentId)),
        ]);
        if (!current) throw missing(groupId);
        requireMatch(precondition, groupTagOf(familyId, groupId, current.version, counters), `group ${groupId}`);
        const at = modificationTime(current.last_modified_at, now());
        // Items left out keep theirs, rendered from a fresh read of their cards.
        const cleaned =
          body.items === undefined || held === undefined
            ? undefined
            : { items: cleanGroupItems(body.items, held, JSON.parse(current.items) as Item[], at), docs: held };
        const next: GroupRow = {
          ...current,
          name: name ?? current.name,
          image_id: body.imageId ?? current.image_id,
          items: cleaned ? JSON.stringify(cleaned.items) : current.items,
          last_modified_at: at,
          version: current.version + 1,
        };
        // The writes need none of their answers: all go out with the commit.
        await repo.updateGroup(trx, groupId, next);
        await families.recordEvent(trx, familyId, 'group-updated', at, { groupId, name: next.name });
        await bumpCountersWithCommit(trx, [scopes.groups(familyId)]);
        const tag = groupTagOf(familyId, groupId, next.version, counters);
        await publishGroup(trx, 'group.changed', familyId, groupId, tag);
        return { row: next, docs: cleaned?.docs, tag };
      });
      return { group: await renderOne(row, docs), tag };
    },

    async remove(userId, groupId) {
      const familyId = await families.findFamilyId(userId);
      if (!familyId) throw missing(groupId);
      await inUnitOfWork(store, [], async (trx) => {
        if (!(await repo.deleteGroup(trx, familyId, groupId))) throw missing(groupId);
        await families.recordEvent(trx, familyId, 'group-deleted', now(), { groupId });
        await bumpCounters(trx, [scopes.groups(familyId)]);
        // The group has no read any more: the event names the list's new tag.
        const counters = await readCounters(trx, LIST_SCOPES.map((kind) => familyScope(kind, familyId)));
        await publish(trx, store.dialect, {
          kind: 'group.deleted',
          audience: { familyId },
          ids: { groupId },
          read: '/card/family/library/groups',
          tag: listTagOf(familyId, counters),
        });
      });
      return { id: groupId };
    },

    async outlines(familyId, held) {
      const present = new Map([...held].map((cardId) => [cardId, '']));
      const rows = await repo.listGroups(db, familyId);
      return rawArray(rows.map((row) => renderRow(row, JSON.parse(row.items) as Item[], present, false)));
    },
  };
}
