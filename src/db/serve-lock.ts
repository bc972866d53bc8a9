/**
 * One `rigd serve` per SQLite data_dir: the process holds an exclusive SQLite lock on a small file
 * of its own (data_dir/serve.lock) for as long as it runs. The kernel drops the lock when the
 * process ends, however it ends (kill -9 included), so a lock that cannot be taken means a live
 * process holds it, and one that can means every earlier holder is gone.
 */
import path from 'node:path';
import type { Database as SqliteDatabase } from 'sqlite3';

export const SERVE_LOCK_FILE = 'serve.lock';

export interface ServeLock {
  release(): Promise<void>;
}

export type ServeLockResult = { held: ServeLock } | { busy: true } | { failed: Error };

function run(db: SqliteDatabase, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

function close(db: SqliteDatabase): Promise<void> {
  return new Promise((resolve) => db.close(() => resolve()));
}

/** Locks this process holds, by lock file: a second app of this process on the data_dir shares it. */
const held = new Map<string, { lock: Promise<ServeLockResult>; users: number }>();

/** Takes the data_dir's serve lock without waiting: held, busy (a live process has it), or failed (the file cannot be written). */
export async function takeServeLock(dataDir: string): Promise<ServeLockResult> {
  const file = path.resolve(dataDir, SERVE_LOCK_FILE);
  let entry = held.get(file);
  if (!entry) {
    entry = { lock: lockFile(file), users: 0 };
    held.set(file, entry);
  }
  const result = await entry.lock;
  if (!('held' in result)) {
    if (held.get(file) === entry && entry.users === 0) held.delete(file);
    return result;
  }
  entry.users++;
  const shared = entry;
  let released = false;
  return {
    held: {
      async release() {
        if (released) return;
        released = true;
        if (--shared.users > 0) return;
        held.delete(file);
        await result.held.release();
      },
    },
  };
}

async function lockFile(file: string): Promise<ServeLockResult> {
  const { default: sqlite3 } = await import('sqlite3');
  let db: SqliteDatabase;
  try {
    db = await new Promise<SqliteDatabase>((resolve, reject) => {
      const conn = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(conn)));
    });
  } catch (err) {
    return { failed: err as Error };
  }
  try {
    // A rollback journal (never WAL: its shared memory would not exclude), and an exclusive lock
    // taken by a write that is never committed.
    await run(db, 'PRAGMA journal_mode=DELETE; PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE;');
  } catch (err) {
    await close(db);
    const code = (err as { code?: string }).code ?? '';
    return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') ? { busy: true } : { failed: err as Error };
  }
  let released = false;
  return {
    held: {
      async release() {
        if (released) return;
        released = true;
        await run(db, 'ROLLBACK').catch(() => undefined);
        await close(db);
      },
    },
  };
}

/**
 * Whether a live `rigd serve` holds the data_dir's serve lock, asked without writing anything
 * (doctor): a read-only connection that cannot even read the lock file is locked out by it. Null
 * when there is no lock file (no serve ever ran here) or it cannot be asked.
 */
export async function serveLockHeld(dataDir: string): Promise<boolean | null> {
  const file = path.join(dataDir, SERVE_LOCK_FILE);
  const { existsSync } = await import('node:fs');
  if (!existsSync(file)) return null;
  const { default: sqlite3 } = await import('sqlite3');
  let db: SqliteDatabase;
  try {
    db = await new Promise<SqliteDatabase>((resolve, reject) => {
      const conn = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => (err ? reject(err) : resolve(conn)));
    });
  } catch {
    return null;
  }
  try {
    db.configure('busyTimeout', 0);
    await new Promise<void>((resolve, reject) => db.get('SELECT count(*) FROM sqlite_master', (err) => (err ? reject(err) : resolve())));
    return false;
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') ? true : null;
  } finally {
    await close(db);
  }
}
