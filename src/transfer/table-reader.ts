import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/unit-of-work.js';
import type { TableSpec } from './archive-format.js';

/** Rows a page query reads: keyset pagination, so memory holds one page whatever the table's size. */
const PAGE_ROWS = 100;
/** Values in one `in (...)` list: far below SQLite's 32,766 bound parameters. */
export const IN_LIST_CHUNK = 1000;

/** Which rows of a table: a condition, or the rows whose `column` is one of `values`. */
export type RowFilter = { where: RawBuilder<unknown> } | { column: string; values: readonly string[] };

export const ALL_ROWS: RowFilter = { where: sql`1 = 1` };

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
