/**
 * Copies the capture store's rows into another store through the CaptureStoreWriter contract, one
 * capture at a time: the capture's tables and columns as recorded on it (captures.tables), its rows
 * read from the source store a page at a time (read.ts), handed to writer.replace. Whatever store is
 * behind the writer (another SQLite file, PostgreSQL) gets the rows the import would have written.
 */
import type { Database } from 'sqlite3';
import { all, captureRowsWithClasses, storeColumns, type StoreValue } from '../capture-store/read.ts';
import { quoteIdent, type CaptureTableSummary } from '../capture-store/layout.ts';
import type { CaptureStoreWriter, RowBatch, StoreTable } from '../capture-store/writer.ts';

/** Rows per batch handed to the writer. */
const BATCH_ROWS = 500;

export interface StoreCapture {
  id: number;
  /** The capture's tables as recorded on it when imported. */
  tables: Pick<CaptureTableSummary, 'name' | 'columns'>[];
}

export interface StoreCopyResult {
  captures: number;
  /** Rows copied per store table (lower-cased name: SQLite's store compares table names without regard to case). */
  rows: Map<string, number>;
}

function bytesOf(row: StoreValue[]): number {
  let n = 0;
  for (const v of row) n += v === null ? 1 : typeof v === 'number' ? 8 : v.length;
  return n;
}

async function* batchesOf(source: Database, captureId: number, tables: readonly StoreTable[]): AsyncGenerator<RowBatch> {
  for (const table of tables) {
    if ((await storeColumns(source, table.name, captureId)) === null) continue;
    let rows: StoreValue[][] = [];
    let classes: string[] = [];
    let bytes = 0;
    // With each row's storage classes: the target keeps integers past 2^53 and reals such as 1.0 exact.
    for await (const row of captureRowsWithClasses(source, table.name, table.columns.map((c) => c.name), captureId, BATCH_ROWS)) {
      rows.push(row.values);
      classes.push(row.classes);
      bytes += bytesOf(row.values);
      if (rows.length >= BATCH_ROWS) {
        yield { table: table.name, rows, bytes, classes };
        rows = [];
        classes = [];
        bytes = 0;
      }
    }
    if (rows.length > 0) yield { table: table.name, rows, bytes, classes };
  }
}

/**
 * Copies the rows of every capture of `captures` from the source store (a read-only connection on
 * it) through writer. Each capture is one writer.replace: a failure leaves the captures copied before.
 */
export async function copyCaptureStore(
  source: Database,
  captures: AsyncIterable<StoreCapture> | Iterable<StoreCapture>,
  writer: CaptureStoreWriter,
  onCapture?: (id: number, rows: number) => void,
): Promise<StoreCopyResult> {
  const rows = new Map<string, number>();
  let count = 0;
  for await (const capture of captures) {
    const tables: StoreTable[] = capture.tables.map((t) => ({ name: t.name, columns: t.columns }));
    const result = await writer.replace(capture.id, tables, batchesOf(source, capture.id, tables));
    let total = 0;
    for (const [name, n] of result.rows) {
      const key = name.toLowerCase();
      rows.set(key, (rows.get(key) ?? 0) + n);
      total += n;
    }
    count += 1;
    onCapture?.(capture.id, total);
  }
  return { captures: count, rows };
}

/** Rows per store table of the source store (lower-cased names), every capture's. */
export async function storeTableCounts(source: Database): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const [catalog] = await all<{ n: number }>(source, "SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table' AND name = 'rigd_capture_tables'");
  if (catalog!.n > 0) {
    // The store's catalog: rows per capture table name, whatever physical table holds them.
    for (const r of await all<{ name: string; n: number }>(source, 'SELECT name, sum(rows) AS n FROM rigd_capture_tables GROUP BY name')) {
      const key = r.name.toLowerCase();
      counts.set(key, (counts.get(key) ?? 0) + Number(r.n));
    }
    return counts;
  }
  const names = await all<{ name: string }>(source, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  for (const { name } of names) {
    const [row] = await all<{ n: number }>(source, `SELECT COUNT(*) AS n FROM ${quoteIdent(name)}`);
    counts.set(name.toLowerCase(), Number(row?.n ?? 0));
  }
  return counts;
}

/** The imported captures of the service database (those with tables recorded), in id order, a page at a time. */
export async function* importedCaptures(service: Database): AsyncGenerator<StoreCapture> {
  let last = 0;
  for (;;) {
    const rows = await all<{ id: number; tables: string }>(
      service,
      'SELECT id, tables FROM captures WHERE id > ? AND tables IS NOT NULL ORDER BY id LIMIT 200',
      [last],
    );
    for (const r of rows) yield { id: r.id, tables: JSON.parse(r.tables) as StoreCapture['tables'] };
    if (rows.length < 200) return;
    last = rows[rows.length - 1]!.id;
  }
}
