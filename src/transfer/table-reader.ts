import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/unit-of-work.js';
import type { Row, TableSpec } from './archive-format.js';

/**
 * Reads of any table of an archive (archive-format.ts's TABLES), with its table and column names
 * known at run time: the data layer of export and import (eslint.config.js, SQL_HOMES).
 */

/** Rows a page query reads: keyset pagination, so memory holds one page whatever the table's size. */
const PAGE_ROWS = 100;
/** Values in one `in (...)` list: far below SQLite's 32,766 bound parameters. */
export const IN_LIST_CHUNK = 1000;

/** Which rows of a table: a condition, or the rows whose `column` is one of `values`. */
export type RowFilter = { where: RawBuilder<unknown> } | { column: string; values: readonly string[] };

export const ALL_ROWS: RowFilter = { where: sql`1 = 1` };
export const NO_ROWS: RowFilter = { where: sql`1 = 0` };

/**
 * The rows of `table` that `filter` selects, page by page in key order (`table.order`,
 * compared byte by byte on both databases: see dialect.text). Portable SQL: row-value
 * comparison `(a, b) > (?, ?)` is understood by SQLite (3.15 on) and PostgreSQL.
 */
export async function* readTable(db: Db, table: TableSpec, filter: RowFilter): AsyncGenerator<Record<string, unknown>[]> {
  if ('values' in filter) {
    // In key order chunk by chunk: the values are sorted, and `column` leads the table's key.
    const values = [...filter.values].sort();
    for (let i = 0; i < values.length; i += IN_LIST_CHUNK) {
      const chunk = values.slice(i, i + IN_LIST_CHUNK);
      yield* readPages(db, table, sql`${sql.ref(filter.column)} in (${sql.join(chunk)})`);
    }
    return;
  }
  yield* readPages(db, table, filter.where);
}

async function* readPages(db: Db, table: TableSpec, where: RawBuilder<unknown>): AsyncGenerator<Record<string, unknown>[]> {
  const columns = table.columns.map((c) => c.name);
  if (table.internalOrder) columns.push(...table.order);
  const order = sql.join(table.order.map((c) => sql.ref(c)));
  let after: unknown[] | undefined;
  for (;;) {
    const keyset = after ? sql`and (${order}) > (${sql.join(after)})` : sql``;
    const { rows } = await sql<Record<string, unknown>>`select ${sql.join(columns.map((c) => sql.ref(c)))} from ${sql.table(table.name)} where (${where}) ${keyset} order by ${order} limit ${PAGE_ROWS}`.execute(db);
    if (rows.length > 0) yield rows;
    if (rows.length < PAGE_ROWS) return;
    const last = rows[rows.length - 1]!;
    after = table.order.map((c) => last[c]);
  }
}

/** Whether the table has any row. */
export async function hasRows(db: Db, table: string): Promise<boolean> {
  const { rows } = await sql`select 1 as one from ${sql.table(table)} limit 1`.execute(db);
  return rows.length > 0;
}

/** The `key` columns of the rows whose first key column is one of `values`. */
export async function keysWhereLeadIn(db: Db, table: string, key: readonly string[], values: readonly unknown[]): Promise<Row[]> {
  const lead = key[0]!;
  const found = await sql<Row>`select ${sql.join(key.map((c) => sql.ref(c)))} from ${sql.table(table)} where ${sql.ref(lead)} in (${sql.join(values)})`.execute(db);
  return found.rows;
}

/** The distinct values among `values` (at most IN_LIST_CHUNK) that `column` of `table` has. */
export async function distinctValuesIn(db: Db, table: string, column: string, values: readonly string[]): Promise<string[]> {
  const { rows } = await sql<{ value: string }>`select distinct ${sql.ref(column)} as value from ${sql.table(table)} where ${sql.ref(column)} in (${sql.join(values)})`.execute(db);
  return rows.map((row) => row.value);
}
