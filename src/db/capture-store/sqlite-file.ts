/**
 * The capture store's SQLite file: created on first use in data_dir (mode 0640, owned by data_dir's
 * owner even when a root command creates it), opened in WAL mode on a connection of its own, apart
 * from the service database's, so imports never hold the service writer.
 */
import { chmodSync, chownSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import path from 'node:path';
import sqlite3 from 'sqlite3';
import { captureStorePath } from './layout.ts';

/** Mode of the store file (SQLite gives its -wal and -shm the same mode and owner). */
export const STORE_FILE_MODE = 0o640;

/** How long a writer in another process waits for the write lock, ms. */
export const STORE_BUSY_TIMEOUT_MS = 120_000;

/** The store connection's pragmas (the writer's, and the capture child's copy). */
export const STORE_PRAGMAS = [
  'PRAGMA journal_mode = WAL',
  'PRAGMA synchronous = NORMAL',
  `PRAGMA busy_timeout = ${STORE_BUSY_TIMEOUT_MS}`,
  'PRAGMA trusted_schema = OFF',
  // A 4 MiB page cache: a large import spills to the WAL instead of growing rigd's memory.
  'PRAGMA cache_size = -4096',
  'PRAGMA cache_spill = ON',
  // After a checkpoint, a WAL that a large import grew is cut back to 64 MiB.
  'PRAGMA journal_size_limit = 67108864',
];

export function run(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<{ changes: number }> {
  return new Promise((resolve, reject) =>
    db.run(sql, params, function (this: sqlite3.RunResult, err: Error | null) {
      if (err) reject(err);
      else resolve({ changes: this.changes });
    }),
  );
}

export function all<T>(db: sqlite3.Database, sql: string, params: unknown[] = []): Promise<T[]> {
  return new Promise((resolve, reject) => db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}

export function exec(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

export function closeDatabase(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
}

function openFile(file: string, mode: number): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db: sqlite3.Database = new sqlite3.Database(file, mode, (err) => (err ? reject(err) : resolve(db)));
  });
}

/** Creates the empty store file with its mode and owner unless it exists. Returns whether it did. */
function createFile(file: string): boolean {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true });
  let fd: number;
  try {
    fd = openSync(file, 'wx', STORE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  closeSync(fd);
  chmodSync(file, STORE_FILE_MODE); // whatever the umask
  // As the service database: a file a root command creates belongs to data_dir's owner.
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    const owner = statSync(dir);
    if (owner.uid !== 0) chownSync(file, owner.uid, owner.gid);
  }
  return true;
}

/** Opens (creating on first use) the store of dataDir for writing, with the store's pragmas. */
export async function openStoreFile(dataDir: string): Promise<{ db: sqlite3.Database; file: string }> {
  const file = captureStorePath(dataDir);
  createFile(file);
  const db = await openFile(file, sqlite3.OPEN_READWRITE);
  try {
    for (const sql of STORE_PRAGMAS) await exec(db, sql);
  } catch (err) {
    await closeDatabase(db).catch(() => undefined);
    throw err;
  }
  return { db, file };
}

/**
 * Opens the store file read-only for export and query: no writes are possible on this connection
 * (OPEN_READONLY and query_only), it waits up to 5 s for a lock. The caller closes it.
 */
export async function openCaptureStoreReadOnly(file: string): Promise<sqlite3.Database> {
  const db = await openFile(file, sqlite3.OPEN_READONLY);
  try {
    db.configure('busyTimeout', 5000);
    await exec(db, 'PRAGMA query_only = ON; PRAGMA trusted_schema = OFF');
  } catch (err) {
    await closeDatabase(db).catch(() => undefined);
    throw err;
  }
  return db;
}
