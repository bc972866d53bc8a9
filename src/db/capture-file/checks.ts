/**
 * The statements of the capture child's checks on an untrusted capture (src/ingest/capture-open.ts
 * and capture-reader.ts hold the policy): its schema rows, SQLite's list of what it parsed,
 * quick_check, and per table its columns, row count and the longest value of each column (or, from
 * SQLite's dbstat, its cells and largest record).
 */
import type sqlite3 from 'sqlite3';
import { quoteIdent } from '../capture-store/layout.ts';
import { all } from './handle.ts';

export interface SchemaRow {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** The first `cap` rows of sqlite_schema, in file order. */
export function schemaRows(db: sqlite3.Database, cap: number): Promise<SchemaRow[]> {
  return all<SchemaRow>(db, `SELECT type, name, tbl_name, sql FROM main.sqlite_schema ORDER BY rowid LIMIT ${Math.floor(cap)}`);
}

/** SQLite's own list of the tables it parsed (`wr`: WITHOUT ROWID). */
export function tableList(db: sqlite3.Database): Promise<{ schema: string; name: string; type: string; wr: number }[]> {
  return all(db, 'PRAGMA main.table_list');
}

/** quick_check's first finding ('ok' when there is none), or undefined when it answered nothing or more. */
export async function quickCheck(db: sqlite3.Database): Promise<string | undefined> {
  const check = await all<{ quick_check: string }>(db, 'PRAGMA main.quick_check(1)');
  return check.length === 1 ? String(check[0]!.quick_check) : undefined;
}

/** The plain tables' names (SQLite's own sqlite_* tables left out), in schema order. */
export async function plainTableNames(db: sqlite3.Database): Promise<string[]> {
  const rows = await all<{ name: string }>(db, "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid");
  return rows.map((r) => r.name);
}

/** A table's columns, hidden ones (generated columns) included and flagged. */
export function tableColumns(db: sqlite3.Database, table: string): Promise<{ cid: number; name: string; type: string; hidden: number }[]> {
  return all(db, `PRAGMA main.table_xinfo(${quoteIdent(table)})`);
}

/** A table's primary-key columns, in key order. */
export async function primaryKey(db: sqlite3.Database, table: string): Promise<string[]> {
  const info = await all<{ name: string; pk: number }>(db, `PRAGMA main.table_info(${quoteIdent(table)})`);
  return info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
}

export async function rowCount(db: sqlite3.Database, table: string): Promise<number> {
  return Number((await all<{ n: number }>(db, `SELECT count(*) AS n FROM main.${quoteIdent(table)}`))[0]!.n);
}

/**
 * One scan of `table`: its row count, each named column's longest value in bytes (octet_length
 * reads it from the record header: a large value is not loaded), and, with `time`, that column's
 * min and max.
 */
export async function measureColumns(
  db: sqlite3.Database,
  table: string,
  columns: readonly string[],
  time: string | null,
): Promise<{ rows: number; longest: (number | null)[]; min: unknown; max: unknown }> {
  const measures = columns.map((c, i) => `max(octet_length(${quoteIdent(c)})) AS m${i}`);
  if (time !== null) measures.push(`min(${quoteIdent(time)}) AS lo`, `max(${quoteIdent(time)}) AS hi`);
  const [row] = await all<Record<string, unknown>>(db, `SELECT count(*) AS n${measures.length > 0 ? `, ${measures.join(', ')}` : ''} FROM main.${quoteIdent(table)}`);
  const longest = columns.map((_, i) => {
    const v = row![`m${i}`];
    return typeof v === 'number' ? v : null;
  });
  return { rows: Number(row!.n), longest, min: row!.lo ?? null, max: row!.hi ?? null };
}

/** A b-tree's cells and its largest record, as SQLite's dbstat reads them from the pages. */
export interface BtreeStat {
  /** Cells on leaf pages (a rowid table's rows). */
  leafCells: number;
  /** Cells on every page (a WITHOUT ROWID table's rows: its interior cells are rows too). */
  cells: number;
  /** The largest cell payload, overflow included: a whole row's record, so no value of the table is longer. */
  largest: number;
}

/**
 * Every b-tree of the capture by name (tables and indexes), from one walk of its pages (the dbstat
 * virtual table: page headers and overflow chains, no record decoded): far cheaper than reading
 * every value's length, and an upper bound of them.
 */
export async function btreeStats(db: sqlite3.Database): Promise<Map<string, BtreeStat>> {
  const rows = await all<{ name: string; leaf: number; cells: number; largest: number }>(
    db,
    "SELECT name, sum(CASE WHEN pagetype = 'leaf' THEN ncell ELSE 0 END) AS leaf, sum(ncell) AS cells, max(mx_payload) AS largest FROM dbstat WHERE schema = 'main' GROUP BY name",
  );
  return new Map(rows.map((r) => [r.name, { leafCells: Number(r.leaf), cells: Number(r.cells), largest: Number(r.largest) }]));
}

/** The min and max of one column of `table` (a time column's span). */
export async function columnSpan(db: sqlite3.Database, table: string, column: string): Promise<{ min: unknown; max: unknown }> {
  const [row] = await all<{ lo: unknown; hi: unknown }>(db, `SELECT min(${quoteIdent(column)}) AS lo, max(${quoteIdent(column)}) AS hi FROM main.${quoteIdent(table)}`);
  return { min: row?.lo ?? null, max: row?.hi ?? null };
}
