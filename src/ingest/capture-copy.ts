/**
 * The import in the engine, in the capture child (after openChecked: schema policy and quick_check):
 * a connection on the SQLite store file gets the same defensive limits and pragmas as the capture's
 * (one attached database allowed, not query-only), the checked capture is ATTACHed read-only and
 * immutable, and the store copies its rows with INSERT ... SELECT in one transaction
 * (db/capture-store/sqlite-copy.ts). No row passes through JavaScript, in the child or in rigd.
 *
 * importInEngine: the tables are listed and held to the store's bounds (too_wide, reserved names)
 * first; the scan that counts them and measures their values (row_too_large, time spans) then runs
 * on the capture's own connection while the copy runs on the store's (two SQLite threads), and the
 * copy commits only once that scan has passed (and rigd has given its go-ahead). A copy that fails
 * meanwhile reports the scan's refusal when there is one (a value over the limit is the likely cause).
 */
import type sqlite3 from 'sqlite3';
import { PageReader } from '../db/capture-file/pages.ts';
import { attachCapture, COPY_CHUNK_BYTES, COPY_CHUNK_ROWS, copyAttached, openStoreForCopy, type AttachedTable } from '../db/capture-store/sqlite-copy.ts';
import { closeDatabase } from '../db/capture-store/sqlite-file.ts';
import { defend } from './capture-open.ts';
import { CaptureRejected } from './capture-rejected.ts';
import type { CaptureTable, ChildRequest, CopyResult, RawTimeSpan } from './capture-protocol.ts';
import { listTables, measureTables } from './capture-reader.ts';
import { checkStorable, keyOf } from './import-stream.ts';

/** A store failure (not the capture's): the import may be retried. */
export class StoreFailure extends Error {}

export async function copyIntoStore(
  req: ChildRequest,
  tables: readonly AttachedTable[],
  onTable: (table: string, rows: number) => Promise<void>,
  beforeCommit: () => Promise<void>,
): Promise<CopyResult> {
  const target = req.import!.store!;
  let db: sqlite3.Database;
  try {
    db = await openStoreForCopy(target.file);
  } catch (err) {
    throw new StoreFailure(`the capture store ${target.file} cannot be opened: ${(err as Error).message}`);
  }
  try {
    await defend(db, req, true);
    await attachCapture(db, req.file);
    const { rows, replaced } = await copyAttached(db, target.captureId, tables, req.import!.bounds, onTable, beforeCommit);
    return { rows: Object.fromEntries(rows), replaced };
  } catch (err) {
    if (err instanceof CaptureRejected) throw err;
    const e = err as Error & { code?: string };
    throw new StoreFailure(`capture store ${target.file}: ${String(e.message ?? e).replace(/^SQLITE_[A-Z_]+: /, '')}`);
  } finally {
    await closeDatabase(db).catch(() => undefined);
  }
}

/** Rows sampled at the start of a table to size its chunks (progress every COPY_CHUNK_BYTES or so). */
const SAMPLE_ROWS = 64;

/** Rows per chunk of a rowid table: COPY_CHUNK_BYTES by the average width of its first rows. */
async function chunkRowsOf(db: sqlite3.Database, t: CaptureTable, key: string[]): Promise<number> {
  const sizes = await new PageReader(db, t.name, t.columns.map((c) => c.name), key, true).sizes(null, SAMPLE_ROWS);
  if (sizes.length === 0) return COPY_CHUNK_ROWS;
  const bytes = sizes.reduce((n, row) => n + row.reduce((m, v) => m + v + 8, 0), 0) / sizes.length;
  return Math.max(1, Math.min(COPY_CHUNK_ROWS, Math.floor(COPY_CHUNK_BYTES / Math.max(bytes, 1))));
}

export interface InEngineImport {
  tables: CaptureTable[];
  spans: RawTimeSpan[];
  copied: CopyResult;
}

/** The import in the engine of the opened, checked capture `db` (see the top of this file). */
export async function importInEngine(
  db: sqlite3.Database,
  req: ChildRequest,
  onStart: () => Promise<void>,
  onTable: (table: string, rows: number) => Promise<void>,
  beforeCommit: () => Promise<void>,
): Promise<InEngineImport> {
  const listed = await listTables(db);
  checkStorable(listed, req.import!.bounds.maxColumns);
  const attached: AttachedTable[] = [];
  for (const t of listed) {
    const { key, rowid } = await keyOf(db, t);
    attached.push({ name: t.name, columns: t.columns, order: key, rowid, chunkRows: rowid ? await chunkRowsOf(db, t, key) : COPY_CHUNK_ROWS });
  }
  await onStart();
  const spans: RawTimeSpan[] = [];
  const measured = measureTables(db, listed, { maxValueBytes: req.maxValueBytes, spans });
  measured.catch(() => undefined); // awaited below, whichever way the copy ends
  let copied: CopyResult;
  try {
    copied = await copyIntoStore(req, attached, onTable, async () => {
      await measured;
      await beforeCommit();
    });
  } catch (err) {
    await measured; // its refusal, if any, is the reason
    throw err;
  }
  return { tables: await measured, spans, copied };
}
