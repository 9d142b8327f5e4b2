import type { Database } from '../db/database.js';

/**
 * A column's portable type: `text` (no NUL: PostgreSQL cannot store it), `json` (text that
 * parses as JSON), `int` (a safe integer; flags are 0/1 integers), `bigint` (a size: a
 * non-negative safe integer, a number in the archive even where PostgreSQL reads a string).
 */
export type ColumnType = 'text' | 'json' | 'int' | 'bigint';

export interface ColumnSpec<N extends string = string> {
  name: N;
  type: ColumnType;
  nullable?: boolean;
  /** The archive version that added the column (nullable then): archives before it lack it. Default 1. */
  since?: number;
}

/** The columns a row of `table` has in an archive of `version`, in order. */
export const columnsOf = (table: TableSpec, version: number): readonly ColumnSpec[] => table.columns.filter((c) => (c.since ?? 1) <= version);

export interface TableSpec {
  name: string;
  columns: readonly ColumnSpec[];
  /** The order rows are read and written in: the primary key, or an internal one. */
  order: readonly string[];
  /**
   * A column of `order` that is not exported (family_events' auto-increment id: history is
   * read in id order, so rows are written in that order and the target numbers them anew).
   */
  internalOrder?: boolean;
  /** Every key a row of the archive may collide on with a row already in the target. */
  keys: readonly (readonly string[])[];
  /**
   * Rows named by their content (a media object by its hash, a transcode by its source): a
   * row already in the target is the same fact, kept as it is, never a conflict.
   */
  shared?: boolean;
  /**
   * Columns that name a row of another table (a foreign key, declared or not): the importer
   * refuses a value found neither in the archive nor in the target.
   */
  references?: readonly Reference[];
  /**
   * The table's columns that the archive does not carry, and the values the importer writes in
   * them, the same for every row of one import (`at`: its time). A link arrives failed, its
   * sign-in left behind (link-tables.ts). The exporter reads the archive's columns only.
   */
  onImport?: (at: string) => Row;
}

export interface Reference {
  column: string;
  /** The table named, by its first key. */
  table: 'media_objects' | 'cards' | 'families' | 'accounts' | 'links';
  /**
   * A family's archive may name what it does not carry: its library records name catalogue
   * cards, which a family's archive never holds (a server without them shows nothing there).
   */
  optionalInFamilyArchive?: boolean;
}

export type Row = Record<string, string | number | null>;

/** The columns of a table of the database. */
type ColumnOf<T extends keyof Database> = keyof Database[T] & string;

/** Nothing when every column of `T` is named; else a member the spec lacks, naming the missing ones. */
type EveryColumn<T extends keyof Database, Named> = [Exclude<ColumnOf<T>, Named>] extends [never]
  ? unknown
  : { missingColumns: Exclude<ColumnOf<T>, Named> };

/**
 * A table's spec, checked against `Database` by `tsc`: every column of the table is named once,
 * in `columns` (the archive carries it) or in `leftOut` (it does not; the spec's comments say
 * why), so a column added to the table fails the build until the archive decides about it; a
 * name that is no column fails it too.
 */
export function tableSpec<
  T extends keyof Database,
  const C extends readonly ColumnSpec<ColumnOf<T>>[],
  const L extends readonly ColumnOf<T>[] = readonly [],
>(spec: Omit<TableSpec, 'name' | 'columns'> & { name: T; columns: C; leftOut?: L } & EveryColumn<T, C[number]['name'] | L[number]>): TableSpec {
  return spec;
}
