/**
 * The capture store's layout: what the import writes and what export and query read.
 *
 * The store is a database of its own, apart from the service's (SQLite: `capture-store.sqlite` in
 * data_dir, WAL mode; PostgreSQL: a schema of its own). It holds one table per capture table name
 * (e.g. `frames`), with the rows of every capture that has such a table:
 *
 *   capture_id INTEGER NOT NULL   -- captures.id in the service database (rig and project are there)
 *   <the capture's columns>       -- added as captures bring new ones; a capture lacking one leaves NULL
 *
 * and an index on capture_id named `<table>.capture_id` ({@link captureIdIndexName}). Names keep the
 * spelling of the capture that first brought them (SQLite compares them without regard to case, so
 * `Frames` and `frames` are one table). A capture's own column named capture_id is refused
 * (unsupported_schema), and so is a table whose name ends in `.capture_id` (it would clash with an
 * index); tables named sqlite_* never reach the store.
 *
 * A column's type in the store is the affinity ({@link affinity}) of the type declared by the first
 * capture that brought it; a column declared without a type gets none, so every value keeps its own
 * storage class (blobs stay blobs, NULLs stay NULL). Columns are only ever added, never dropped.
 */
import path from 'node:path';

/** The store's file in data_dir (SQLite). */
export const CAPTURE_STORE_FILE = 'capture-store.sqlite';

/** The column that ties a row to its capture. */
export const CAPTURE_ID_COLUMN = 'capture_id';

/** Suffix of the index on capture_id; capture tables ending with it are refused. */
export const CAPTURE_ID_INDEX_SUFFIX = '.capture_id';

/** The name of the index on capture_id of a store table. */
export function captureIdIndexName(table: string): string {
  return `${table}${CAPTURE_ID_INDEX_SUFFIX}`;
}

/** Whether a capture's table or column name cannot be stored as is (see the layout above). */
export function reservedName(kind: 'table' | 'column', name: string): boolean {
  const lower = name.toLowerCase();
  if (kind === 'column') return lower === CAPTURE_ID_COLUMN;
  return lower.startsWith('sqlite_') || lower.endsWith(CAPTURE_ID_INDEX_SUFFIX);
}

export function captureStorePath(dataDir: string): string {
  return path.join(path.resolve(dataDir), CAPTURE_STORE_FILE);
}

/** A column of a capture table, as the capture declares it. */
export interface StoreColumn {
  name: string;
  /** Declared type as written in the capture's schema ('' when none). */
  type: string;
}

/**
 * One table of one capture, as recorded on the capture once imported (captures.tables) and shown by
 * the capture list, `rigd captures show` and the API.
 */
export interface CaptureTableSummary {
  name: string;
  /** The capture's own columns in their order (capture_id not among them). */
  columns: StoreColumn[];
  rows: number;
  /** The first timestamp-like column (by name or declared type), null when none. */
  time_column: string | null;
  /** Earliest and latest value of time_column as ISO 8601 (UTC), null when none could be read as a time. */
  first: string | null;
  last: string | null;
}

/**
 * The type a store column is declared with: the affinity of the capture's declared type, or none
 * (BLOB affinity, no conversion) when the capture declared none or a plain BLOB.
 */
export function storeColumnType(declared: string): '' | Exclude<Affinity, 'BLOB'> {
  const a = affinity(declared);
  return a === 'BLOB' ? '' : a;
}

/** SQLite's column affinity of a declared type (https://sqlite.org/datatype3.html, 3.1). */
export type Affinity = 'INTEGER' | 'TEXT' | 'BLOB' | 'REAL' | 'NUMERIC';

export function affinity(declared: string): Affinity {
  const t = declared.toUpperCase();
  if (t.includes('INT')) return 'INTEGER';
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'TEXT';
  if (t.includes('BLOB') || t.trim() === '') return 'BLOB';
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return 'REAL';
  return 'NUMERIC';
}

/** An identifier as a double-quoted SQL identifier (valid in SQLite and PostgreSQL). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
