/**
 * Reading the capture store (layout.ts) without ever writing to it: export and the operator's query.
 *
 * The store is opened with SQLITE_OPEN_READONLY, `PRAGMA query_only=ON` and SQLITE_LIMIT_ATTACHED 0
 * (ATTACH and VACUUM INTO fail), so any write is refused by SQLite itself. Nothing is created in
 * data_dir: with no `-wal` file (no writer connected, last close clean) the file is all there is and
 * it is read as immutable (no `-shm`, no locks); with a `-wal` it is read next to it, as the doctor
 * reads the service database (src/services/doctor/database.ts).
 */
import { existsSync } from 'node:fs';
import type { Database, Statement } from 'sqlite3';
import { openSqliteReadOnly } from '../sqlite-read-only.ts';
import { CAPTURE_ID_COLUMN, captureStorePath, quoteIdent } from './layout.ts';
import { mapColumns } from './placement.ts';
import { findCaptureTable } from './sqlite-catalog.ts';

export type StoreValue = number | string | Buffer | null;
export type StoreRow = Record<string, StoreValue>;

export interface StoreReader {
  readonly file: string;
  readonly db: Database;
  close(): Promise<void>;
}

/** The store of data_dir opened read-only, or null when it does not exist (nothing imported yet). */
export async function openStoreReadOnly(dataDir: string): Promise<StoreReader | null> {
  const file = captureStorePath(dataDir);
  if (!existsSync(file)) return null;
  return openSqliteReadOnly(file, { noAttach: true });
}

export function run(db: Database, sql: string, params: unknown[] = []): Promise<void> {
  return new Promise((resolve, reject) => db.run(sql, params, (err) => (err ? reject(err) : resolve())));
}

export function all<T>(db: Database, sql: string, params: unknown[] = []): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}

export function prepare(db: Database, sql: string, params: unknown[] = []): Promise<Statement> {
  return new Promise((resolve, reject) => {
    const stmt: Statement = db.prepare(sql, params, (err) => (err ? reject(err) : resolve(stmt)));
  });
}

/** One step of a prepared statement: the next row, or undefined at the end. */
export function step<T>(stmt: Statement): Promise<T | undefined> {
  return new Promise((resolve, reject) => stmt.get((err: Error | null, row: T | undefined) => (err ? reject(err) : resolve(row))));
}

export function finalize(stmt: Statement): Promise<void> {
  return new Promise((resolve) => stmt.finalize(() => resolve()));
}

/** Whether the store has its catalog (a store of the earlier layout has none until a writer opens it). */
async function hasCatalog(db: Database): Promise<boolean> {
  const [row] = await all<{ n: number }>(db, "SELECT count(*) AS n FROM main.sqlite_schema WHERE type = 'table' AND name = 'rigd_capture_tables'");
  return row!.n > 0;
}

/**
 * Where capture `captureId`'s table `table` is: its physical table and the physical column of each
 * of its columns (catalog); a store without catalog holds it in the table of that name.
 */
export async function locateCaptureTable(db: Database, table: string, captureId: number): Promise<{ physical: string; columns: { name: string; store: string }[] } | null> {
  if (await hasCatalog(db)) return findCaptureTable(db, captureId, table);
  const rows = await all<{ name: string }>(db, 'SELECT name FROM pragma_table_info(?)', [table]);
  if (rows.length === 0) return null;
  return { physical: table, columns: rows.filter((r) => r.name !== CAPTURE_ID_COLUMN).map((r) => ({ name: r.name, store: r.name })) };
}

/**
 * The columns of `table`: with `captureId`, that capture's own columns as it named them (null when
 * the store does not hold that capture's table); without, the store table of that name's columns.
 */
export async function storeColumns(db: Database, table: string, captureId?: number): Promise<string[] | null> {
  if (captureId !== undefined) {
    const found = await locateCaptureTable(db, table, captureId);
    // A physical table removed behind the store's back holds nothing.
    const held = found && (await all<{ n: number }>(db, "SELECT count(*) AS n FROM main.sqlite_schema WHERE type = 'table' AND name = ?", [found.physical]))[0]!.n > 0;
    return held ? found.columns.map((c) => c.name) : null;
  }
  const rows = await all<{ name: string }>(db, 'SELECT name FROM pragma_table_info(?)', [table]);
  return rows.length > 0 ? rows.map((r) => r.name) : null;
}

/** Integers JavaScript cannot hold exactly come out as their decimal text. */
const SAFE = Number.MAX_SAFE_INTEGER;
function exactColumn(name: string): string {
  const q = quoteIdent(name);
  return `CASE WHEN typeof(${q}) = 'integer' AND (${q} > ${SAFE} OR ${q} < -${SAFE}) THEN CAST(${q} AS TEXT) ELSE ${q} END`;
}

/**
 * The storage classes of a row's values as one string, a letter per value (typeof's first: n, i, r,
 * t, b), as a balanced tree of || (its depth stays small however wide the table).
 */
export function classesExpression(columns: readonly (string | null)[]): string {
  const leaves = columns.map((c) => (c === null ? "'n'" : `substr(typeof(${quoteIdent(c)}), 1, 1)`));
  const tree = (from: number, to: number): string => {
    if (to - from === 1) return leaves[from]!;
    const mid = (from + to) >> 1;
    return `(${tree(from, mid)} || ${tree(mid, to)})`;
  };
  return leaves.length === 0 ? "''" : tree(0, leaves.length);
}

async function* pages(db: Database, table: string, columns: string[], captureId: number, pageSize: number, withClasses: boolean): AsyncGenerator<Record<string, StoreValue>> {
  const found = await locateCaptureTable(db, table, captureId);
  if (!found) throw new Error(`the capture store holds no table ${table} of capture ${captureId}`);
  const physical = mapColumns(found.columns.map((c) => ({ ...c, type: '' })), columns, 'sqlite');
  // The store table's rowid under a name none of its columns takes.
  const taken = new Set((await storeColumns(db, found.physical) ?? []).map((c) => c.toLowerCase()));
  const rowid = ['rowid', '_rowid_', 'oid'].find((n) => !taken.has(n));
  if (!rowid) throw new Error(`store table ${found.physical} has columns named rowid, _rowid_ and oid: its rows cannot be paged`);
  const parts = [`${rowid} AS r`, ...physical.map((c, i) => `${c === null ? 'NULL' : exactColumn(c)} AS c${i}`)];
  if (withClasses) parts.push(`${classesExpression(physical)} AS cls`);
  const base = `SELECT ${parts.join(', ')} FROM ${quoteIdent(found.physical)} WHERE ${quoteIdent(CAPTURE_ID_COLUMN)} = ?`;
  const first = await prepare(db, `${base} ORDER BY ${rowid} LIMIT ?`);
  const next = await prepare(db, `${base} AND ${rowid} > ? ORDER BY ${rowid} LIMIT ?`);
  const page = (stmt: Statement, params: unknown[]) =>
    new Promise<Record<string, StoreValue>[]>((resolve, reject) =>
      stmt.all(params, (err: Error | null, rows: Record<string, StoreValue>[]) => (err ? reject(err) : resolve(rows))),
    );
  try {
    let rows = await page(first, [captureId, pageSize]);
    for (;;) {
      yield* rows;
      if (rows.length < pageSize) return;
      rows = await page(next, [captureId, rows[rows.length - 1]!.r, pageSize]);
    }
  } finally {
    await Promise.all([finalize(first), finalize(next)]);
  }
}

/**
 * The rows of one capture in one store table, in insertion order (rowid), a page at a time: memory
 * holds one page whatever the table's size. Each row is an array of values in the order of `columns`
 * (the capture's own names; the catalog says which physical table and columns hold them).
 */
export async function* captureRows(db: Database, table: string, columns: string[], captureId: number, pageSize = 500): AsyncGenerator<StoreValue[]> {
  for await (const row of pages(db, table, columns, captureId, pageSize, false)) yield columns.map((_, i) => row[`c${i}`] ?? null);
}

/** As captureRows, with each row's storage classes (integers past 2^53 come as their digits, class i). */
export async function* captureRowsWithClasses(db: Database, table: string, columns: string[], captureId: number, pageSize = 500): AsyncGenerator<{ values: StoreValue[]; classes: string }> {
  for await (const row of pages(db, table, columns, captureId, pageSize, true)) yield { values: columns.map((_, i) => row[`c${i}`] ?? null), classes: String(row.cls) };
}
