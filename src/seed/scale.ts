import { randomInt } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import type {
  Database,
  FamilyEventsTable,
  LibraryRecordRow,
  NewCardRow,
} from '../db/database.js';
import type { Store } from '../db/dialect.js';
import { newHexId, newUrlSafeId } from '../shared/ids.js';
import { newLibraryRecord } from '../modules/library/rules.js';
import { buildCardDoc, cardRow } from '../modules/cards/card-document.js';
import type { CardDoc, CardInput } from '../modules/cards/schemas.js';
import type { Db } from '../db/unit-of-work.js';
import { insertRows, isMember, takenCardIds } from './repository.js';

/**
 * `cardshelf seed --scale N`: a large, realistic data set written straight into the tables, in
 * batches of multi-row inserts, one transaction a batch. The documents are built by the same
 * code the card service uses (buildCardDoc, cardRow), so the stored rows are exactly what the
 * API would have stored. Portable Kysely only: it runs on every dialect.
 */
export interface ScaleOptions {
  /** How many users; each gets a family of their own. */
  users: number;
  /** Mean MYO cards a user (each user gets between 1 and twice this, less one). */
  cardsPerUser: number;
  /** Start of the users' ids: `auth0|<prefix>-<n>`. A second data set in one database needs another. */
  prefix: string;
  /** Catalogue cards (free, club, premium) that libraries, groups and wishlists refer to. */
  catalogueCards: number;
}

export interface ScaleReport {
  users: number;
  cards: number;
  catalogueCards: number;
  libraryRecords: number;
  groups: number;
  wishlists: number;
  events: number;
  seconds: number;
}

export const scaleUserId = (prefix: string, n: number): string => `auth0|${prefix}-${String(n).padStart(7, '0')}`;

export class AlreadySeeded extends Error {}

/** Users written per transaction: about 50 x cardsPerUser cards, a few MB of documents. */
const USERS_PER_BATCH = 200;
/**
 * Rows per insert statement. SQLite allows 32,766 bound values and PostgreSQL 65,535; the widest
 * table (cards) has 11 columns, so 400 rows stay far below both.
 */
const ROWS_PER_INSERT = 400;

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ID_SPACE = 62 ** 5;
/** Odd and not a multiple of 31, so prime to 62^5: k -> k*STRIDE mod 62^5 is a bijection. */
const ID_STRIDE = 387_420_489;

/**
 * Card ids without collisions within a run (random 5-character ids would collide hundreds of
 * times in a million): a counter scattered over the id space by a bijection, so ids still look
 * random and spread over the primary key. Ids that exist already are skipped (see freeIds).
 */
function cardIdSequence(): () => string {
  let k = randomInt(ID_SPACE);
  return () => {
    k = (k + 1) % ID_SPACE;
    let n = Number((BigInt(k) * BigInt(ID_STRIDE)) % BigInt(ID_SPACE));
    let id = '';
    for (let i = 0; i < 5; i++) {
      id += ALNUM[n % 62];
      n = Math.floor(n / 62);
    }
    return id;
  };
}

/** mulberry32: a small, fast PRNG, seeded per user so a data set is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Rand {
  (): number;
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
}

function rand(seed: number): Rand {
  const next = prng(seed);
  const r = (() => next()) as Rand;
  r.int = (min, max) => min + Math.floor(next() * (max - min + 1));
  r.pick = (items) => items[Math.floor(next() * items.length)] as (typeof items)[number];
  return r;
}

const ADJECTIVES = ['Sleepy', 'Brave', 'Little', 'Happy', 'Secret', 'Magic', 'Noisy', 'Tiny', 'Golden', 'Silly', 'Quiet', 'Wild'];
const NOUNS = ['Owl', 'Dragon', 'Train', 'Forest', 'Rocket', 'Ocean', 'Garden', 'Robot', 'Moon', 'Bear', 'Castle', 'Song'];
const KINDS = ['Stories', 'Songs', 'Adventures', 'Lullabies', 'Tales', 'Sounds', 'Rhymes'];
const AUTHORS = ['Mum', 'Dad', 'Grandma', 'Grandpa', 'Auntie Jo', 'Uncle Sam', 'Ms Patel', 'The Kids'];
const CATEGORIES = ['stories', 'music', 'podcast', 'sfx', 'activities', 'none'] as const;
const ICONS = ['icon-star', 'icon-moon', 'icon-heart', 'icon-car', 'icon-book', 'icon-note'];
const FROM = Date.parse('2023-01-01T00:00:00.000Z');
const SPAN = Date.parse('2025-06-01T00:00:00.000Z') - FROM;

const hash = (r: Rand): string => Math.floor(r() * 2 ** 48).toString(36).padStart(10, '0');
const isoAt = (r: Rand, after = FROM): string => new Date(after + Math.floor(r() * (FROM + SPAN - after))).toISOString();

/** A MYO card as a parent records one: a few chapters of one to three tracks, mostly. */
function myoCard(r: Rand): CardInput {
  // Most cards are short; a few are long audiobooks.
  const chapterCount = r() < 0.1 ? r.int(8, 20) : r.int(1, 5);
  const chapters = Array.from({ length: chapterCount }, (_, c) => {
    const key = String(c + 1).padStart(2, '0');
    return {
      key,
      title: `${r.pick(ADJECTIVES)} ${r.pick(NOUNS)}`,
      overlayLabel: String(c + 1),
      display: { icon16x16: `service:#${r.pick(ICONS)}` },
      tracks: Array.from({ length: r.int(1, 3) }, (_, t) => ({
        key: String(t + 1).padStart(2, '0'),
        title: `Part ${t + 1}`,
        trackUrl: `service:#${hash(r)}`,
        type: 'audio' as const,
        format: 'aac',
        duration: r.int(30, 900),
        fileSize: r.int(200_000, 9_000_000),
        display: { icon16x16: `service:#${r.pick(ICONS)}` },
      })),
    };
  });
  return {
    title: `${r.pick(ADJECTIVES)} ${r.pick(NOUNS)} ${r.pick(KINDS)}`,
    metadata: {
      author: r.pick(AUTHORS),
      category: r.pick(CATEGORIES),
      description: r() < 0.5 ? `Recorded at home, ${r.int(1, 28)} ${r.pick(['May', 'June', 'July'])}.` : '',
      media: { duration: chapterCount * 300, fileSize: chapterCount * 3_000_000, hasStreams: false },
    },
    content: {
      activity: 'service_Player',
      version: '1',
      config: { autoadvance: r.pick(['next', 'repeat', 'none']), onlineOnly: false },
      chapters,
    },
  };
}

/** A catalogue card: a fifth premium only, the rest free or in the club. */
function catalogueCard(r: Rand, i: number): { input: CardInput; free: boolean; club: boolean } {
  const kind = i % 5;
  const free = kind === 0 || kind === 1;
  const club = kind === 2 || kind === 3;
  const base = myoCard(r);
  return {
    input: {
      ...base,
      title: `${r.pick(ADJECTIVES)} ${r.pick(NOUNS)} (catalogue ${i + 1})`,
      availability: free ? 'free' : 'premium',
      clubAvailability: club ? [{ store: 'us' }, { store: 'gb' }] : [],
    },
    free,
    club,
  };
}

/** Picks `n` distinct items (n <= items.length), in a random order. */
function sample<T>(r: Rand, items: readonly T[], n: number): T[] {
  const pool = [...items];
  const out: T[] = [];
  for (let i = 0; i < n && pool.length > 0; i++) {
    const j = Math.floor(r() * pool.length);
    out.push(pool[j] as T);
    pool[j] = pool[pool.length - 1] as T;
    pool.pop();
  }
  return out;
}

async function insertChunked<T extends keyof Database>(
  db: Db,
  table: T,
  rows: Insertable<Database[T]>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    await insertRows(db, table, rows.slice(i, i + ROWS_PER_INSERT));
  }
}

/**
 * Replaces the ids in `ids` that some card in the database already has (cards made through the
 * API, or by an earlier data set) with fresh ones from `next`.
 */
async function freeIds(db: Db, ids: string[], next: () => string): Promise<string[]> {
  const out = [...ids];
  let check = out.map((_, i) => i);
  while (check.length > 0) {
    const taken = new Set<string>();
    for (let i = 0; i < check.length; i += ROWS_PER_INSERT) {
      const some = check.slice(i, i + ROWS_PER_INSERT).map((j) => out[j] as string);
      for (const cardId of await takenCardIds(db, some)) taken.add(cardId);
    }
    check = check.filter((j) => taken.has(out[j] as string));
    for (const j of check) out[j] = next();
  }
  return out;
}

/** Gives the (rare) cards whose id some existing card has already a fresh id. */
async function reIdTaken(db: Db, rows: NewCardRow[], nextId: () => string): Promise<void> {
  const ids = await freeIds(db, rows.map((row) => row.card_id), nextId);
  for (const [i, row] of rows.entries()) {
    const cardId = ids[i] as string;
    if (cardId === row.card_id) continue;
    const doc = JSON.parse(row.doc) as CardDoc;
    rows[i] = cardRow({ ...doc, cardId }, row.origin);
  }
}

interface Catalogue {
  /** Ids of the cards a family library may hold (free or club). */
  eligible: string[];
  all: string[];
}

async function seedCatalogue(db: Kysely<Database>, count: number, nextId: () => string): Promise<Catalogue> {
  const r = rand(0x5eed);
  const made = Array.from({ length: count }, (_, i) => catalogueCard(r, i));
  const ids = await freeIds(db, made.map(() => nextId()), nextId);
  const rows: NewCardRow[] = [];
  const eligible: string[] = [];
  for (const [i, { input, free, club }] of made.entries()) {
    const cardId = ids[i] as string;
    const at = isoAt(r);
    const doc = buildCardDoc(input, { cardId, userId: 'cardshelf|catalogue', createdAt: at, updatedAt: at, deleted: false });
    rows.push(cardRow(doc, 'catalogue'));
    if (free || club) eligible.push(cardId);
  }
  await db.transaction().execute((trx) => insertChunked(trx, 'cards', rows));
  return { eligible, all: ids };
}

interface Batch {
  cards: NewCardRow[];
  families: Insertable<Database['families']>[];
  memberships: Insertable<Database['family_memberships']>[];
  devices: Insertable<Database['family_devices']>[];
  events: Insertable<FamilyEventsTable>[];
  records: LibraryRecordRow[];
  groups: Insertable<Database['library_groups']>[];
  wishlists: Insertable<Database['wishlists']>[];
}

/** Everything for users [from, to): their families, cards, libraries, groups and wishlists. */
function buildBatch(opts: ScaleOptions, catalogue: Catalogue, from: number, to: number, nextId: () => string): Batch {
  const batch: Batch = {
    cards: [],
    families: [],
    memberships: [],
    devices: [],
    events: [],
    records: [],
    groups: [],
    wishlists: [],
  };
  for (let n = from; n < to; n++) {
    const r = rand(n * 2654435761);
    const userId = scaleUserId(opts.prefix, n);
    const familyId = newHexId();
    const joined = isoAt(r);
    const events: Insertable<FamilyEventsTable>[] = [];
    const event = (type: string, at: string, details: Record<string, unknown>): void => {
      events.push({ family_id: familyId, type, at, details: JSON.stringify(details) });
    };

    batch.families.push({
      family_id: familyId,
      country: r.pick(['US', 'GB', 'US', 'CA', 'AU', 'DE']),
      flags: JSON.stringify({ sharingOn: r() < 0.3 }),
      created_at: joined,
      updated_at: joined,
    });
    event('family-created', joined, {});
    batch.memberships.push({
      user_id: userId,
      family_id: familyId,
      listed: 1,
      added_at: joined,
      approved: 1,
      approved_at: joined,
      verified: 1,
      verified_email: `${opts.prefix}-${n}@example.com`,
      position: 0,
    });
    event('member-added', joined, { userId });
    for (let d = 0, devices = r.int(1, 3); d < devices; d++) {
      const deviceId = `${opts.prefix}-player-${n}-${d}`;
      batch.devices.push({ device_id: deviceId, family_id: familyId, added_at: joined, position: d });
      event('device-added', joined, { deviceId });
    }

    for (let c = 0, count = r.int(1, 2 * opts.cardsPerUser - 1); c < count; c++) {
      const cardId = nextId();
      const createdAt = isoAt(r, Date.parse(joined));
      const updatedAt = r() < 0.3 ? isoAt(r, Date.parse(createdAt)) : createdAt;
      const doc = buildCardDoc(myoCard(r), { cardId, userId, createdAt, updatedAt, deleted: r() < 0.02 });
      batch.cards.push(cardRow(doc, 'myo'));
    }

    const held = sample(r, catalogue.eligible, r.int(0, Math.min(15, catalogue.eligible.length)));
    for (const cardId of held) {
      const at = isoAt(r, Date.parse(joined));
      batch.records.push(newLibraryRecord(familyId, cardId, userId, at));
      event('card-added', at, { cardId, userId });
    }

    for (let g = 0, groups = held.length === 0 ? 0 : r.int(0, 3); g < groups; g++) {
      const at = isoAt(r, Date.parse(joined));
      const groupId = newHexId();
      const name = `${r.pick(ADJECTIVES)} ${r.pick(KINDS)}`;
      const items = sample(r, held, r.int(1, Math.min(10, held.length))).map((contentId) => ({ contentId, addedAt: at }));
      batch.groups.push({
        group_id: groupId,
        family_id: familyId,
        name,
        image_id: r.pick(ICONS),
        items: JSON.stringify(items),
        created_at: at,
        last_modified_at: at,
      });
      event('group-created', at, { groupId, name });
    }

    for (let w = 0, lists = r.int(0, 3); w < lists; w++) {
      const at = isoAt(r, Date.parse(joined));
      const content = sample(r, catalogue.all, r.int(1, Math.min(20, catalogue.all.length))).map((item) => ({
        item,
        ...(r() < 0.3 ? { note: 'for the birthday' } : {}),
      }));
      batch.wishlists.push({
        wishlist_id: newUrlSafeId(),
        share_id: newUrlSafeId(),
        user_id: userId,
        content: JSON.stringify(content),
        created_at: at,
        updated_at: at,
      });
    }
    // History is read oldest first by its auto-increment id: insert each family's in time order.
    batch.events.push(...events.sort((a, b) => a.at.localeCompare(b.at)));
  }
  return batch;
}

/**
 * Writes the data set. `progress` gets a line now and then (the CLI sends it to stderr).
 * Refuses (AlreadySeeded) when the first user of this prefix exists already.
 */
export async function seedScale(
  store: Store,
  opts: ScaleOptions,
  progress: (line: string) => void,
): Promise<ScaleReport> {
  const { db } = store;
  const started = performance.now();
  if (await isMember(db, scaleUserId(opts.prefix, 0))) {
    throw new AlreadySeeded(
      `this database holds a data set with prefix '${opts.prefix}' already; use a fresh database or another --prefix`,
    );
  }

  const nextId = cardIdSequence();
  const catalogue = await seedCatalogue(db, opts.catalogueCards, nextId);
  const report: ScaleReport = {
    users: 0,
    cards: 0,
    catalogueCards: opts.catalogueCards,
    libraryRecords: 0,
    groups: 0,
    wishlists: 0,
    events: 0,
    seconds: 0,
  };

  let lastReport = 0;
  for (let from = 0; from < opts.users; from += USERS_PER_BATCH) {
    const to = Math.min(opts.users, from + USERS_PER_BATCH);
    const batch = buildBatch(opts, catalogue, from, to, nextId);
    await reIdTaken(db, batch.cards, nextId);
    await db.transaction().execute(async (trx) => {
      // Parents before children: the foreign keys are checked on every insert.
      await insertChunked(trx, 'families', batch.families);
      await insertChunked(trx, 'family_memberships', batch.memberships);
      await insertChunked(trx, 'family_devices', batch.devices);
      await insertChunked(trx, 'cards', batch.cards);
      await insertChunked(trx, 'library_records', batch.records);
      await insertChunked(trx, 'library_groups', batch.groups);
      await insertChunked(trx, 'wishlists', batch.wishlists);
      await insertChunked(trx, 'family_events', batch.events);
    });
    report.users = to;
    report.cards += batch.cards.length;
    report.libraryRecords += batch.records.length;
    report.groups += batch.groups.length;
    report.wishlists += batch.wishlists.length;
    report.events += batch.events.length;

    const elapsed = (performance.now() - started) / 1000;
    if (to === opts.users || elapsed - lastReport >= 2) {
      lastReport = elapsed;
      progress(
        `seed: ${to.toLocaleString('en')}/${opts.users.toLocaleString('en')} users, ` +
          `${report.cards.toLocaleString('en')} cards, ${elapsed.toFixed(1)} s ` +
          `(${Math.round(report.cards / elapsed).toLocaleString('en')} cards/s)`,
      );
    }
  }
  // Fresh statistics for the planner, as after any bulk load.
  await store.dialect.analyze(db);
  report.seconds = (performance.now() - started) / 1000;
  return report;
}
