/**
 * The SQLite side of `rigd db copy`: data_dir's service database opened read-only (the file is never
 * written: SQLITE_OPEN_READONLY and query_only), its tables and columns, and its rows a page at a
 * time in primary-key order, so memory holds one page whatever the table's size.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'sqlite3';
import { all } from '../capture-store/read.ts';
import { quoteIdent } from '../capture-store/layout.ts';
import { DB_FILE } from '../file.ts';
import { openSqliteReadOnly, type ReadOnlySqlite } from '../sqlite-read-only.ts';

export type SourceValue = number | string | Buffer | null;

export type SqliteSource = ReadOnlySqlite;

export { openSqliteReadOnly };

/** The service database of dataDir, or null when there is none. */
export async function openServiceSource(dataDir: string): Promise<SqliteSource | null> {
  const file = path.join(path.resolve(dataDir), DB_FILE);
  if (!existsSync(file)) return null;
  return openSqliteReadOnly(file);
}

/** The tables of the source database (not SQLite's own). */
export async function sourceTables(db: Database): Promise<string[]> {
  const rows = await all<{ name: string }>(db, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
  return rows.map((r) => r.name);
}

export async function sourceColumns(db: Database, table: string): Promise<string[]> {
  return (await all<{ name: string }>(db, 'SELECT name FROM pragma_table_info(?)', [table])).map((r) => r.name);
}

export async function sourceCount(db: Database, table: string): Promise<number> {
  const [row] = await all<{ n: number }>(db, `SELECT COUNT(*) AS n FROM ${quoteIdent(table)}`);
  return Number(row?.n ?? 0);
}

/** Integers JavaScript cannot hold exactly are read as their decimal text. */
const SAFE = Number.MAX_SAFE_INTEGER;
function exact(column: string): string {
  const q = quoteIdent(column);
  return `CASE WHEN typeof(${q}) = 'integer' AND (${q} > ${SAFE} OR ${q} < -${SAFE}) THEN CAST(${q} AS TEXT) ELSE ${q} END`;
}

/**
 * The rows of table in order of its one-column primary key `key`, pageSize at a time (keyset
 * paging: each page starts after the last key of the one before). Each row holds the values of
 * `columns` in order.
 */
export async function* sourcePages(db: Database, table: string, key: string, columns: readonly string[], pageSize: number): AsyncGenerator<SourceValue[][]> {
  const select = [`${quoteIdent(key)} AS k`, ...columns.map((c, i) => `${exact(c)} AS c${i}`)].join(', ');
  const from = `SELECT ${select} FROM ${quoteIdent(table)}`;
  let last: SourceValue | undefined;
  for (;;) {
    const rows =
      last === undefined
        ? await all<Record<string, SourceValue>>(db, `${from} ORDER BY ${quoteIdent(key)} LIMIT ?`, [pageSize])
        : await all<Record<string, SourceValue>>(db, `${from} WHERE ${quoteIdent(key)} > ? ORDER BY ${quoteIdent(key)} LIMIT ?`, [last, pageSize]);
    if (rows.length === 0) return;
    yield rows.map((r) => columns.map((_, i) => r[`c${i}`] ?? null));
    if (rows.length < pageSize) return;
    last = rows[rows.length - 1]!.k;
  }
}
