import type { Db } from '../db/unit-of-work.js';
import { PUBLIC_ICONS_OWNER } from '../modules/media/images.js';
import { keyOf, type ArchiveScope, type Reference, type Row, type TableSpec } from './archive-format.js';
import { checkAccountRows } from './accounts.js';
import { KeyIndex } from './key-index.js';
import { typeMismatch } from './media-type.js';
import { refuse } from './refusal.js';
import { cardOwners, membershipsOf } from './repository.js';
import { IN_LIST_CHUNK, distinctValuesIn } from './table-reader.js';

/** Any SHA-256 in a stored document: a media reference, as the exporter and media gc read them. */
const HASH_IN_TEXT = /[0-9a-f]{64}/g;
/** More card owners than this in a family's archive is not one family (checked once its members are known). */
const MAX_CARD_OWNERS = 10_000;

/** A media entry of the archive as the first pass read it: its size and the type of its bytes. */
export interface MediaEntry {
  size: number;
  sniffed: string | undefined;
}

/** Where a row is in the archive, for messages. */
interface At {
  entry: string;
  line: number;
}
const where = (at: At): string => `${at.entry}, line ${at.line}`;

const NOUN: Record<Reference['table'], string> = { media_objects: 'media object', cards: 'card', families: 'family', accounts: 'account', links: 'link' };
const FIRST_KEY: Record<Reference['table'], string> = { media_objects: 'sha256', cards: 'card_id', families: 'family_id', accounts: 'user_id', links: 'link_id' };

/** Tables whose rows name their user, and the column: a user who has any of them uses this server. */
const OWNED_BY: readonly [string, string][] = [
  ['cards', 'user_id'],
  ['wishlists', 'user_id'],
  ['media_holdings', 'owner_id'],
  ['audio_uploads', 'user_id'],
  ['display_icons', 'user_id'],
  ['accounts', 'user_id'],
  ['passkeys', 'user_id'],
  ['links', 'user_id'],
];

/**
 * The checks of the import's first pass that look at rows together, batch by batch, before
 * anything is written (importer.ts checks each row's columns and the archive's integrity):
 *
 * - keys: rows come in key order (archive-format.ts), so a primary key given twice is two
 *   equal neighbours; other unique keys are indexed (key-index.ts) and checked per table;
 * - references: a value naming a family, card or media object must name one of the archive
 *   or of the target (tables come parents first, so the archive's parents are all known);
 * - media objects: the size and type their rows state must be those of their bytes;
 * - a family's archive (scope `family`) may hold only what that family's own export holds:
 *   the family, its members' rows (members being the archive's memberships, who must not be
 *   users of the target already, unless members of that family here), their links' card
 *   pairings, and media its rows name and whose bytes it carries. It adds nothing to other users or families of the target.
 *
 * Each check refuses with a message naming the rows (ArchiveRefused).
 */
export class RowRules {
  private readonly familyId: string | undefined;
  /** Indexes of each table's keys, by table; sealed once the table is read. */
  private readonly indexes = new Map<string, { key: readonly string[]; index: KeyIndex }[]>();
  private readonly open: string[] = [];
  private previous: { table: string; row: Row } | undefined;
  private readonly members = new Set<string>();
  private readonly cardOwners = new Map<string, At>();
  /** Media objects of the archive that its rows name (a family's archive only). */
  private readonly named = new Set<string>();

  constructor(
    private readonly db: Db,
    scope: ArchiveScope,
    private readonly media: ReadonlyMap<string, MediaEntry>,
  ) {
    this.familyId = scope.kind === 'family' ? scope.familyId : undefined;
  }

  /** The rows of one batch of `table`, decoded from `entry`. */
  async check(table: TableSpec, entry: string, rows: Row[]): Promise<void> {
    if (this.previous?.table !== table.name) this.startTable(table);
    const at = (i: number): At => ({ entry, line: i + 1 });
    for (const [i, row] of rows.entries()) {
      this.inKeyOrder(table, row, at(i));
      for (const { key, index } of this.indexes.get(table.name)!) index.add(keyOf(row, key));
      this.sizesAndTypes(table, row, at(i));
    }
    for (const reference of table.references ?? []) await this.resolves(table, reference, rows, at);
    await checkAccountRows(this.db, table, rows, (i) => where(at(i)), this.familyId);
    if (this.familyId !== undefined) await this.inFamily(this.familyId, table, rows, at);
  }

  /** After the last batch. */
  finish(): void {
    this.seal();
    const familyId = this.familyId;
    if (familyId === undefined) return;
    for (const [owner, at] of this.cardOwners) {
      if (!this.members.has(owner)) refuse(`the family archive of ${familyId} holds cards of ${owner}, who is not one of its members (${where(at)})`);
    }
    for (const sha256 of this.media.keys()) {
      if (!this.named.has(sha256)) refuse(`the family archive of ${familyId} carries media object ${sha256}, which none of its rows names`);
    }
  }

  private startTable(table: TableSpec): void {
    this.seal();
    // The first key is the order, checked row by row; it is indexed only where others name it.
    const named = (Object.keys(NOUN)).includes(table.name);
    const keys = table.keys.filter((_, i) => i > 0 || named);
    this.indexes.set(table.name, keys.map((key) => ({ key, index: new KeyIndex() })));
    this.open.push(table.name);
    this.previous = undefined;
  }

  private seal(): void {
    for (const name of this.open.splice(0)) {
      for (const { key, index } of this.indexes.get(name)!) {
        if (index.seal()) refuse(`duplicate key in the archive: two rows of ${name} have the same (${key.join(', ')})`);
      }
    }
  }

  private inKeyOrder(table: TableSpec, row: Row, at: At): void {
    const before = this.previous?.row;
    this.previous = { table: table.name, row };
    if (!before || table.internalOrder) return;
    const order = compareKeys(table, before, row);
    if (order === 0) {
      refuse(`duplicate key in the archive: ${table.name} (${table.order.join(', ')}) ${keyOf(row, table.order)} is there twice (${where(at)})`);
    }
    if (order > 0) refuse(`damaged archive: the rows of ${table.name} are not in key order (${where(at)})`);
  }

  /** A media object's row states its bytes' size and a type they are; holdings and images their object's size. */
  private sizesAndTypes(table: TableSpec, row: Row, at: At): void {
    const object = (column: string): MediaEntry | undefined => this.media.get(String(row[column]));
    if (table.name === 'media_objects') {
      const bytes = object('sha256');
      if (!bytes) return; // reported once the archive is read: a row without bytes
      if (row.size !== bytes.size) refuse(`media object ${row.sha256} is said to be ${row.size} bytes, its bytes are ${bytes.size} (${where(at)})`);
      const mismatch = typeMismatch(String(row.content_type), bytes.sniffed);
      if (mismatch) refuse(`media object ${row.sha256} cannot be stored: ${mismatch} (${where(at)})`);
    }
    const sized = table.name === 'media_holdings' ? 'sha256' : table.name === 'family_images' ? 'image_id' : undefined;
    const bytes = sized && object(sized);
    if (bytes && row.size !== bytes.size) {
      refuse(`${table.name} says ${row[sized]} is ${row.size} bytes, its bytes are ${bytes.size} (${where(at)})`);
    }
  }

  /** Every value of `reference` names a row of the archive or of the target. */
  private async resolves(table: TableSpec, reference: Reference, rows: Row[], at: (i: number) => At): Promise<void> {
    const index = this.indexes.get(reference.table)?.[0]?.index;
    const missing = new Map<string, At>();
    for (const [i, row] of rows.entries()) {
      const value = row[reference.column];
      if (value === null || index?.has(String(value))) continue;
      if (!missing.has(String(value))) missing.set(String(value), at(i));
    }
    if (missing.size === 0 || (this.familyId !== undefined && reference.optionalInFamilyArchive)) return;
    const column = FIRST_KEY[reference.table];
    const found = await valuesIn(this.db, reference.table, column, [...missing.keys()]);
    for (const [value, first] of missing) {
      if (!found.has(value)) {
        refuse(`dangling reference: ${table.name}.${reference.column} names ${NOUN[reference.table]} ${value}, which is neither in the archive nor here (${where(first)})`);
      }
    }
  }

  private async inFamily(familyId: string, table: TableSpec, rows: Row[], at: (i: number) => At): Promise<void> {
    const archive = `the family archive of ${familyId}`;
    const ofFamily = (row: Row, i: number): void => {
      if (row.family_id !== familyId) refuse(`${archive} holds ${table.name} of another family, ${row.family_id} (${where(at(i))})`);
    };
    const ofMember = (row: Row, i: number): void => {
      if (!this.members.has(String(row.user_id))) {
        refuse(`${archive} holds ${table.name} of ${row.user_id}, who is not one of its members (${where(at(i))})`);
      }
    };
    /** A media object its rows give a member or the family: the archive must carry its bytes. */
    const carried = (row: Row, column: string, i: number): void => {
      const sha256 = String(row[column]);
      if (!this.media.has(sha256)) {
        refuse(`${archive} names media object ${sha256} in ${table.name}.${column} without carrying its bytes (${where(at(i))})`);
      }
      this.named.add(sha256);
    };
    const note = (text: unknown): void => {
      for (const match of String(text).match(HASH_IN_TEXT) ?? []) if (this.media.has(match)) this.named.add(match);
    };

    for (const [i, row] of rows.entries()) {
      switch (table.name) {
        case 'cards':
          if (row.origin !== 'myo') refuse(`${archive} holds ${row.origin} card ${row.card_id}: a family's archive holds its members' own cards only (${where(at(i))})`);
          if (!this.cardOwners.has(String(row.user_id))) {
            if (this.cardOwners.size >= MAX_CARD_OWNERS) refuse(`${archive} holds cards of more than ${MAX_CARD_OWNERS} users`);
            this.cardOwners.set(String(row.user_id), at(i));
          }
          note(row.doc);
          break;
        case 'families':
          if (row.family_id !== familyId) refuse(`${archive} holds another family, ${row.family_id} (${where(at(i))})`);
          break;
        case 'family_memberships':
          ofFamily(row, i);
          // Its icons are everyone's: as a member, the archive's icons would be public ones.
          if (row.user_id === PUBLIC_ICONS_OWNER) refuse(`${archive} makes ${PUBLIC_ICONS_OWNER}, the owner of the public icons, a member (${where(at(i))})`);
          this.members.add(String(row.user_id));
          break;
        case 'family_devices':
        case 'family_events':
        case 'library_records':
          ofFamily(row, i);
          break;
        case 'library_groups':
          ofFamily(row, i);
          note(row.image_id);
          break;
        case 'wishlists':
          ofMember(row, i);
          note(row.content);
          break;
        case 'media_holdings':
          if (!this.members.has(String(row.owner_id)) && row.owner_id !== `family:${familyId}`) {
            refuse(`${archive} holds media of ${row.owner_id}, who is not one of its members (${where(at(i))})`);
          }
          carried(row, 'sha256', i);
          break;
        case 'audio_uploads':
          ofMember(row, i);
          if (row.source_sha256 !== null) carried(row, 'source_sha256', i);
          break;
        case 'transcodes':
          // Not imported as they are (importer.ts queues them anew): the source must be the
          // archive's, and the output goes with a source its rows name, as the export takes it.
          carried(row, 'source_sha256', i);
          if (row.transcoded_sha256 !== null) note(row.transcoded_sha256);
          break;
        case 'display_icons':
          ofMember(row, i);
          carried(row, 'media_id', i);
          break;
        case 'family_images':
          ofFamily(row, i);
          carried(row, 'image_id', i);
          break;
        case 'accounts':
        case 'passkeys':
        case 'links':
          ofMember(row, i);
          break;
        case 'link_cards':
          // Its link must be the archive's (a member's): a pairing never joins a link of the target.
          if (!this.indexes.get('links')?.[0]?.index.has(String(row.link_id))) {
            refuse(`${archive} holds link_cards of link ${row.link_id}, which is not one of its links (${where(at(i))})`);
          }
          break;
      }
    }
    if (table.name === 'family_memberships') await this.newcomers(familyId, rows, at);
    if (table.name === 'library_records') await this.libraryCards(familyId, rows, at);
  }

  /**
   * The archive's members must be new to the target, or members of that family here already
   * (then their membership is a conflict, reported as such): a family archive cannot move a
   * user of this server into a family. A user who has never used the server has no rows, and
   * cannot be told apart from a new one: docs/deploy.md says so.
   */
  private async newcomers(familyId: string, rows: Row[], at: (i: number) => At): Promise<void> {
    const users = rows.map((r) => String(r.user_id));
    const line = (user: string): At => at(users.indexOf(user));
    const inFamily = new Set<string>();
    for (const chunk of chunks(users)) {
      const found = await membershipsOf(this.db, chunk);
      for (const m of found) {
        if (m.family_id === familyId) inFamily.add(m.user_id);
        else refuse(`the family archive of ${familyId} would move ${m.user_id}, a member of family ${m.family_id} here, into ${familyId} (${where(line(m.user_id))})`);
      }
    }
    const others = users.filter((u) => !inFamily.has(u));
    for (const [table, column] of OWNED_BY) {
      const found = await valuesIn(this.db, table, column, others);
      for (const user of found) {
        refuse(`the family archive of ${familyId} makes ${user} a member, who already uses this server (${table} of theirs are here) without being one of its members (${where(line(user))})`);
      }
    }
  }

  /** A family's library may name catalogue cards, and its members' cards, but no other user's card here. */
  private async libraryCards(familyId: string, rows: Row[], at: (i: number) => At): Promise<void> {
    const cards = this.indexes.get('cards')?.[0]?.index;
    const outside = rows.map((r) => String(r.card_id)).filter((id) => !cards?.has(id));
    for (const chunk of chunks(outside)) {
      const found = await cardOwners(this.db, chunk);
      for (const card of found) {
        if (card.origin === 'myo' && !this.members.has(card.user_id)) {
          const i = rows.findIndex((r) => r.card_id === card.card_id);
          refuse(`the family archive of ${familyId} puts card ${card.card_id} of ${card.user_id}, who is not one of its members, in its library (${where(at(i))})`);
        }
      }
    }
  }
}

function chunks<T>(values: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += IN_LIST_CHUNK) out.push(values.slice(i, i + IN_LIST_CHUNK));
  return out;
}

/** The values among `values` that `column` of `table` has in the target. */
async function valuesIn(db: Db, table: string, column: string, values: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const chunk of chunks([...new Set(values)])) {
    for (const value of await distinctValuesIn(db, table, column, chunk)) found.add(value);
  }
  return found;
}

/** Rows compared by the table's order, as the databases order them: text byte by byte (UTF-8), numbers as numbers. */
function compareKeys(table: TableSpec, a: Row, b: Row): number {
  for (const column of table.order) {
    const [x, y] = [a[column], b[column]];
    const order = typeof x === 'number' && typeof y === 'number' ? x - y : Buffer.compare(Buffer.from(String(x)), Buffer.from(String(y)));
    if (order !== 0) return Math.sign(order);
  }
  return 0;
}
