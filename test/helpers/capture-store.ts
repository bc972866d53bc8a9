// The capture store in tests: captures made from SQL, opening the store of a test data_dir on the
// engine the suite runs on (data_dir's SQLite file, or under npm run test:pg the store schema of the
// data_dir's own database, databaseUrlFor), and reading it back read-only.
import type sqlite3 from 'sqlite3';
import { captureStorePath, openCaptureStoreReadOnly } from '../../src/db/capture-store/index.ts';
import { openStoreWriter } from '../../src/db/capture-store/open-writer.ts';
import { EXPORT_APPLICATION } from '../../src/db/capture-store/pg-pages.ts';
import { CAPTURE_STORE_SCHEMA } from '../../src/db/capture-store/postgres-schema.ts';
import { connectStore } from '../../src/db/capture-store/postgres-writer.ts';
import { openStoreReader } from '../../src/db/capture-store/store-reader.ts';
import { makeCapture, type MadeCapture } from './capture-files.ts';
import { databaseUrlFor, onPostgres } from './dialect.ts';

/** The store writer of a test data_dir. */
export const openTestStore = (dataDir: string) => openStoreWriter(dataDir, databaseUrlFor(dataDir));
/** The store reader of a test data_dir (null: no store yet). */
export const openTestReader = (dataDir: string) => openStoreReader(dataDir, databaseUrlFor(dataDir));

/** A capture made of the given statements (run in one transaction). */
export function sqlCapture(file: string, ...statements: string[]): Promise<MadeCapture> {
  return makeCapture(file, { tables: [], extraSql: statements });
}

function all<T>(db: sqlite3.Database, sql: string, params: unknown[]): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}

/** Runs one query on the store of dataDir through the read-only opener. */
export async function storeQuery<T = Record<string, unknown>>(dataDir: string, sql: string, params: unknown[] = []): Promise<T[]> {
  if (onPostgres) {
    // ? placeholders become $n; the store schema is the search path.
    let n = 0;
    const text = sql.replace(/\?/g, () => `$${++n}`);
    const client = await connectStore(databaseUrlFor(dataDir));
    try {
      await client.query(`SET search_path TO ${CAPTURE_STORE_SCHEMA}`);
      return (await client.query(text, params)).rows as T[];
    } finally {
      await client.end();
    }
  }
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

/**
 * Open handles on the store: the file's descriptors in this process (SQLite), or the connections
 * exports hold to the database (PostgreSQL; the writer's own connection is not counted).
 */
export async function storeHandles(dataDir: string): Promise<number> {
  if (onPostgres) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: databaseUrlFor(dataDir) });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1", [EXPORT_APPLICATION]);
      return rows[0].n as number;
    } finally {
      await client.end();
    }
  }
  const { readdirSync, readlinkSync } = await import('node:fs');
  const file = captureStorePath(dataDir);
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(file);
    } catch {
      return false;
    }
  }).length;
}

/**
 * storeHandles once it holds still (the same count three times, 200 ms apart): an export whose
 * client has read it all closes its handle a moment later, so a count taken at once can be one high.
 */
export async function settledStoreHandles(dataDir: string, timeoutMs = 30_000): Promise<number> {
  const seen: number[] = [];
  const until = Date.now() + timeoutMs;
  for (;;) {
    seen.push(await storeHandles(dataDir));
    if (seen.length >= 3 && seen.slice(-3).every((n) => n === seen.at(-1))) return seen.at(-1)!;
    if (Date.now() > until) throw new Error(`store handles never held still in ${timeoutMs} ms: ${seen.slice(-10).join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
