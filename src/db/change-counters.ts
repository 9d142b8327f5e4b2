import { sql, type AliasedRawBuilder, type Compilable, type Expression } from 'kysely';
import { preparedStatement, withCommit, type PreparedRun } from './prepared.js';
import type { Db } from './unit-of-work.js';

/**
 * Change counters: one number per scope of data that list and family answers show, bumped in
 * the transaction of every write that can change such an answer. An answer's entity tag is made
 * from the counters of the scopes it shows (src/shared/entity-tag.ts), so a poll learns that
 * nothing changed from one small read instead of rendering the answer.
 *
 * A scope's counter only grows; a scope never written has the counter 0. Writers bump their
 * scopes as the last statements of their transaction, in key order, so that the row locks this
 * takes (PostgreSQL) come after every other lock of the unit of work and never form a cycle.
 */
export const scopes = {
  /** A user's MYO cards: `GET /content/mine`. */
  cards: (userId: string) => `cards:${userId}`,
  /**
   * What a family's reads show besides its groups: members, devices, country and flags, library
   * records, its history, and its members' MYO cards (the library and groups show them).
   */
  family: (familyId: string) => `family:${familyId}`,
  /** A family's groups (created, updated, deleted), and their events in its history. */
  groups: (familyId: string) => `groups:${familyId}`,
  /** A user's wishlists (created, updated, deleted): `GET /wishlists`. */
  wishlists: (userId: string) => `wishlists:${userId}`,
  /** Catalogue cards, written by operators; libraries and groups of every family show them. */
  catalogue: 'catalogue',
} as const;

type CounterRow = { scope: string; version: number | string };
/** Its parameters: the scopes, as a list (db/prepared.ts: a list's members are named by their index). */
type CountersStatement = PreparedRun<readonly string[], CounterRow>;

/**
 * A statement on n counters (its `in` list or its rows vary with n), compiled once for each n up
 * to PREPARED_COUNTS (writes and reads name 1 to 3), built anew past that.
 */
const PREPARED_COUNTS = 8;
function perCount(build: (db: Db, scopes: readonly string[]) => Compilable<CounterRow>): (count: number) => CountersStatement {
  const compiled = new Map<number, CountersStatement>();
  return (count) => {
    if (count > PREPARED_COUNTS) {
      return Object.assign(async (db: Db, scopes: readonly string[]) => (await db.executeQuery(build(db, scopes).compile())).rows, {
        withCommit: (db: Db, scopes: readonly string[]) => withCommit(db, build(db, scopes)),
      });
    }
    let run = compiled.get(count);
    if (!run) {
      run = preparedStatement<readonly string[], CounterRow>((db, scopes) => build(db, Array.from({ length: count }, (_, i) => scopes[i]!)));
      compiled.set(count, run);
    }
    return run;
  };
}

const bumpOf = perCount((db, scopes) =>
  db
    .insertInto('change_counters')
    .values(scopes.map((scope) => ({ scope, version: 1 })))
    .onConflict((oc) => oc.column('scope').doUpdateSet({ version: sql`change_counters.version + 1` }))
    .returning(['scope', 'version']),
);

const readOf = perCount((db, scopes) => db.selectFrom('change_counters').select(['scope', 'version']).where('scope', 'in', scopes));

/**
 * Bumps the counters of `changed` (each once), inside the writer's transaction, and gives their
 * new values, by scope: a writer that names its new tag needs no read of them after. One
 * statement however many they are; its rows are written in key order (PostgreSQL takes their
 * row locks in the order of the values), the order every writer bumps in.
 */
export async function bumpCounters(db: Db, changed: Iterable<string>): Promise<ReadonlyMap<string, number>> {
  const sorted = [...new Set(changed)].sort();
  const bumped = new Map<string, number>();
  if (sorted.length === 0) return bumped;
  const rows = await bumpOf(sorted.length)(db, sorted);
  for (const row of rows) bumped.set(row.scope, Number(row.version));
  return bumped;
}

/**
 * `bumpCounters` for a writer that needs not their new values: sent to be answered with the
 * commit (db/prepared.ts), after the writer's other statements.
 */
export async function bumpCountersWithCommit(db: Db, changed: Iterable<string>): Promise<void> {
  const sorted = [...new Set(changed)].sort();
  if (sorted.length > 0) await bumpOf(sorted.length).withCommit(db, sorted);
}

/** The counters of `wanted`, in its order (0 for a scope never written), in one read. */
export async function readCounters(db: Db, wanted: readonly string[]): Promise<number[]> {
  if (wanted.length === 0) return [];
  const distinct = [...new Set(wanted)];
  const rows = await readOf(distinct.length)(db, distinct);
  const found = new Map(rows.map((r) => [r.scope, Number(r.version)]));
  return wanted.map((scope) => found.get(scope) ?? 0);
}

/** The scopes a family's answers show: its own, its groups', and the catalogue's. */
export type FamilyScope = 'family' | 'groups' | 'catalogue';

/** The scope of a family's kind of data (see `scopes`). */
export const familyScope = (kind: FamilyScope, familyId: string): string =>
  kind === 'catalogue' ? scopes.catalogue : scopes[kind](familyId);

/**
 * The counters of `wanted` for the family whose id is `familyId` (a column of the query), as
 * values the query selects (`counter_0`, `counter_1`, ..., in the order of `wanted`; read them
 * back with `countersOf`): so that the read that finds a family, or a row of one, also reads the
 * counters of its tag, one statement instead of two. 0 for a scope never written.
 */
export function selectCounters(
  wanted: readonly FamilyScope[],
  familyId: Expression<string>,
): AliasedRawBuilder<number | string, `counter_${number}`>[] {
  return wanted.map((kind, i) => {
    // A family's scope is its prefix and the family's id (see `scopes`): the database makes it.
    const scope = kind === 'catalogue' ? sql.lit(scopes.catalogue) : sql`${sql.lit(familyScope(kind, ''))} || ${familyId}`;
    return sql<number | string>`coalesce((select c.version from change_counters c where c.scope = ${scope}), 0)`.as(
      `counter_${i}`,
    );
  });
}

/** The counters a row read with `selectCounters(wanted, ...)` holds, in the order of `wanted`. */
export function countersOf(row: Record<`counter_${number}`, number | string>, wanted: readonly FamilyScope[]): number[] {
  return wanted.map((_, i) => Number(row[`counter_${i}`]));
}
