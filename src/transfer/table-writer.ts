import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../db/unit-of-work.js';
import type { Row, TableSpec } from './archive-format.js';

/**
 * Writes rows into any table of an archive (archive-format.ts's TABLES), its table and column
 * names known at run time: the data layer of import (eslint.config.js, SQL_HOMES).
 */

/** Values bound in one insert: below SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_BOUND_VALUES = 30_000;

/**
 * The SQL of a multi-row insert, by table and row count, compiled once by Kysely for the
 * dialect (its placeholders, its quoting): a million rows then cost a parameter array each
 * batch instead of a tree of query nodes, which is most of the import's garbage.
 */
const insertSql = new Map<string, string>();

/**
 * Inserts `rows` (every column of `table`, and those it sets on import, `arriving`, the same on
 * every row: archive-format.ts's onImport), in as few statements as the bound values allow.
 */
export async function insertRows(trx: Db, table: TableSpec, rows: Row[], arriving: Row = {}): Promise<void> {
  const carried = table.columns.map((c) => c.name);
  const set = Object.keys(arriving);
  const columns = [...carried, ...set];
  const perInsert = Math.max(1, Math.floor(MAX_BOUND_VALUES / columns.length));
  for (let i = 0; i < rows.length; i += perInsert) {
    const chunk = rows.slice(i, i + perInsert);
    const shape = `${table.name}:${columns.length}:${chunk.length}`;
    let text = insertSql.get(shape);
    if (text === undefined) {
      const values = chunk.map(() => sql`(${sql.join(columns.map(() => null))})`);
      text = sql`insert into ${sql.table(table.name)} (${sql.join(columns.map((c) => sql.ref(c)))}) values ${sql.join(values)}`.compile(trx).sql;
      insertSql.set(shape, text);
    }
    const parameters: unknown[] = [];
    for (const row of chunk) {
      for (const column of carried) parameters.push(row[column]);
      for (const column of set) parameters.push(arriving[column]);
    }
    await trx.executeQuery(CompiledQuery.raw(text, parameters));
  }
}
