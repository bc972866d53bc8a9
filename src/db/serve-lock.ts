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

/** Takes the data_dir's serve lock without waiting: held, busy (a live process has it), or failed (the file cannot be written). */
export async function takeServeLock(dataDir: string): Promise<ServeLockResult> {
  const { default: sqlite3 } = await import('sqlite3');
  let db: SqliteDatabase;
  try {
    db = await new Promise<SqliteDatabase>((resolve, reject) => {
      const conn = new sqlite3.Database(path.join(dataDir, SERVE_LOCK_FILE), (err) => (err ? reject(err) : resolve(conn)));
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
