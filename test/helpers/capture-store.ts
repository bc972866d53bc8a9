// The capture store in tests: captures made from SQL, and reading the store back read-only.
import type sqlite3 from 'sqlite3';
import { captureStorePath, openCaptureStoreReadOnly } from '../../src/db/capture-store/index.ts';
import { makeCapture, type MadeCapture } from './capture-files.ts';

/** A capture made of the given statements (run in one transaction). */
export function sqlCapture(file: string, ...statements: string[]): Promise<MadeCapture> {
  return makeCapture(file, { tables: [], extraSql: statements });
}

function all<T>(db: sqlite3.Database, sql: string, params: unknown[]): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}

/** Runs one query on the store of dataDir through the read-only opener. */
export async function storeQuery<T = Record<string, unknown>>(dataDir: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const db = await openCaptureStoreReadOnly(captureStorePath(dataDir));
  try {
    return await all<T>(db, sql, params);
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

/** Rows of one capture in a store table. */
export async function countRows(dataDir: string, table: string, captureId: number): Promise<number> {
  const [row] = await storeQuery<{ n: number }>(dataDir, `SELECT count(*) AS n FROM "${table.replaceAll('"', '""')}" WHERE capture_id = ?`, [captureId]);
  return row!.n;
}
