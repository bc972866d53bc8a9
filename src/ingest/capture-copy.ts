/**
 * The import in the engine, in the capture child (after openChecked, readTables and the bounds):
 * a connection on the SQLite store file gets the same defensive limits and pragmas as the capture's
 * (one attached database allowed, not query-only), the checked capture is ATTACHed read-only and
 * immutable, and the store copies its rows with INSERT ... SELECT in one transaction
 * (db/capture-store/sqlite-copy.ts). No row passes through JavaScript, in the child or in rigd.
 */
import type sqlite3 from 'sqlite3';
import { attachCapture, copyAttached, openStoreForCopy, type AttachedTable } from '../db/capture-store/sqlite-copy.ts';
import { closeDatabase } from '../db/capture-store/sqlite-file.ts';
import { defend } from './capture-open.ts';
import { CaptureRejected } from './capture-rejected.ts';
import type { ChildRequest, CopyResult } from './capture-protocol.ts';

/** A store failure (not the capture's): the import may be retried. */
export class StoreFailure extends Error {}

export async function copyIntoStore(
  req: ChildRequest,
  tables: readonly AttachedTable[],
  onTable: (table: string, rows: number) => Promise<void>,
  beforeCommit: (rows: ReadonlyMap<string, number>) => Promise<void>,
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
