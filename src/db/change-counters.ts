import { sql, type Expression, type RawBuilder } from 'kysely';
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

/** Bumps the counters of `changed` (each once), inside the writer's transaction. */
export async function bumpCounters(db: Db, changed: Iterable<string>): Promise<void> {
  for (const scope of [...new Set(changed)].sort()) {
    await db
      .insertInto('change_counters')
      .values({ scope, version: 1 })
      .onConflict((oc) => oc.column('scope').doUpdateSet({ version: sql`change_counters.version + 1` }))
      .execute();
  }
}

/** The counters of `wanted`, in its order (0 for a scope never written), in one read. */
export async function readCounters(db: Db, wanted: readonly string[]): Promise<number[]> {
  if (wanted.length === 0) return [];
  const rows = await db
    .selectFrom('change_counters')
    .select(['scope', 'version'])
    .where('scope', 'in', [...new Set(wanted)])
    .execute();
  const found = new Map(rows.map((r) => [r.scope, Number(r.version)]));
  return wanted.map((scope) => found.get(scope) ?? 0);
}

/**
 * The counter of a family's scope (`scopes.family`, `scopes.groups`) as a value a query selects,
 * for the family whose id is `familyId` (a column of the query): so that the read that finds a
 * family also reads the counters of its tag, one statement instead of two. 0 when never written.
 */
export function familyCounter(scope: (familyId: string) => string, familyId: Expression<string>): RawBuilder<number | string> {
  // The scope is its prefix and the family's id (see `scopes`), so the database can make it.
  return sql<number | string>`coalesce((select c.version from change_counters c where c.scope = ${sql.lit(scope(''))} || ${familyId}), 0)`;
}

/** The counter of the catalogue, as a value a query selects (0 when never written). */
export function catalogueCounter(): RawBuilder<number | string> {
  return sql<number | string>`coalesce((select c.version from change_counters c where c.scope = ${sql.lit(scopes.catalogue)}), 0)`;
}
