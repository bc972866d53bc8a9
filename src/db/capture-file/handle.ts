/**
 * An untrusted capture file's connection, for the capture child (src/ingest/capture-child.ts) only:
 * opened read-only and immutable, SQLite's defensive limits and pragmas, and the statements that
 * read what the file is (page size and count). The policy (what is refused, and why) is the
 * child's; the statements are here.
 */
import { pathToFileURL } from 'node:url';
import sqlite3 from 'sqlite3';

export type CaptureHandle = sqlite3.Database;

export function all<T>(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, params, (err: Error | null, rows: T[]) => (err ? reject(err) : resolve(rows))));
}

export function openReadOnly(file: string): Promise<sqlite3.Database> {
  // immutable=1: the file is rigd's own temp copy and does not change while we read it, so SQLite
  // takes no locks and never looks for or creates -wal, -shm or -journal files (also for WAL-mode files).
  const uri = `${pathToFileURL(file).href}?immutable=1`;
  return new Promise((resolve, reject) => {
    const db: sqlite3.Database = new sqlite3.Database(uri, sqlite3.OPEN_READONLY | sqlite3.OPEN_URI, (err) =>
      err ? reject(err) : resolve(db),
    );
  });
}

export function close(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve) => db.close(() => resolve()));
}

/** SQLite's own upper bound of LIMIT_LENGTH (SQLITE_MAX_LENGTH as built). */
const SQLITE_MAX_LENGTH = 1_000_000_000;

function limit(db: sqlite3.Database, id: number | undefined, value: number): void {
  if (typeof id === 'number') db.configure('limit', id, value);
}

export interface DefenceBounds {
  /** Largest single string or blob value allowed, bytes (LIMIT_LENGTH on a reading connection). */
  maxValueBytes: number;
  /** SQLite's heap cap (hard_heap_limit), MiB. */
  memoryLimitMb: number;
}

/**
 * SQLite's defensive limits and pragmas on a connection that reads the capture. `forCopy`: the
 * store's connection in an import in the engine, which attaches the (already checked) capture and
 * writes the store: one attached database allowed, and not query-only (the capture is attached
 * read-only and immutable, so nothing can write to it).
 */
export async function defend(db: sqlite3.Database, bounds: DefenceBounds, forCopy = false): Promise<void> {
  // Limits first: they bound everything below, including the schema parse.
  limit(db, sqlite3.LIMIT_ATTACHED, forCopy ? 1 : 0);
  // LIMIT_LENGTH bounds a whole row's record too: the copy writes capture_id and every value of a
  // row as one record, each value already checked against maxValueBytes (readTables), so that
  // connection allows rows as long as SQLite builds them.
  limit(db, sqlite3.LIMIT_LENGTH, forCopy ? SQLITE_MAX_LENGTH : bounds.maxValueBytes);
  limit(db, sqlite3.LIMIT_SQL_LENGTH, 1024 * 1024);
  limit(db, sqlite3.LIMIT_COLUMN, 2000);
  limit(db, sqlite3.LIMIT_EXPR_DEPTH, 100);
  limit(db, sqlite3.LIMIT_COMPOUND_SELECT, 4);
  limit(db, sqlite3.LIMIT_VDBE_OP, 100_000);
  limit(db, sqlite3.LIMIT_FUNCTION_ARG, 8);
  limit(db, sqlite3.LIMIT_LIKE_PATTERN_LENGTH, 100);
  limit(db, sqlite3.LIMIT_VARIABLE_NUMBER, 16);
  limit(db, sqlite3.LIMIT_TRIGGER_DEPTH, 1);
  limit(db, sqlite3.LIMIT_WORKER_THREADS, 0);
  const heap = bounds.memoryLimitMb * 1024 * 1024;
  for (const pragma of [
    'trusted_schema = OFF',
    'cell_size_check = ON',
    ...(forCopy ? [] : ['query_only = ON']),
    'mmap_size = 0',
    `hard_heap_limit = ${heap}`,
    `soft_heap_limit = ${Math.floor(heap / 2)}`,
    'temp_store = MEMORY',
    'cache_size = -8192',
  ]) {
    await all(db, `PRAGMA ${pragma}`);
  }
}

/** The capture's page size and page count. */
export async function pageInfo(db: sqlite3.Database): Promise<{ pageSize: number; pageCount: number }> {
  const pageSize = Number((await all<{ page_size: number }>(db, 'PRAGMA main.page_size'))[0]!.page_size);
  const pageCount = Number((await all<{ page_count: number }>(db, 'PRAGMA main.page_count'))[0]!.page_count);
  return { pageSize, pageCount };
}
