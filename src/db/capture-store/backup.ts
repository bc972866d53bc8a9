/**
 * A consistent copy of the capture store, safe while imports run: VACUUM INTO from a read-only
 * connection (one read transaction: a snapshot of the last commit; an import in progress is not in
 * it and is not held up), into a 0600 temp file next to the target, checked with quick_check, fsynced,
 * then renamed into place. The same safety as the service database's backup (db/backup.ts); the store
 * can be large, so it is a separate, explicit copy (`rigd backup FILE --capture-store FILE2`).
 */
import { existsSync } from 'node:fs';
import sqlite3 from 'sqlite3';
import { captureStorePath } from './layout.ts';
import { all, closeDatabase, run } from './sqlite-file.ts';
import { writeCheckedCopy, type CopyResult } from '../vacuum-copy.ts';

export type StoreBackupResult = CopyResult;

function openReadOnly(file: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db: sqlite3.Database = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => (err ? reject(err) : resolve(db)));
  });
}

/** Writes a consistent copy of dataDir's capture store to `target` (which must not exist). */
export async function backupCaptureStore(dataDir: string, target: string): Promise<StoreBackupResult> {
  const source = captureStorePath(dataDir);
  if (!existsSync(source)) throw new Error(`${source} does not exist: no capture has been imported yet`);
  return writeCheckedCopy(
    target,
    async (tmp) => {
      const db = await openReadOnly(source);
      try {
        db.configure('busyTimeout', 10_000);
        await run(db, 'VACUUM INTO ?', [tmp]);
      } finally {
        await closeDatabase(db);
      }
    },
    async (tmp) => {
      const copy = await openReadOnly(tmp);
      try {
        const check = await all<{ quick_check: string }>(copy, 'PRAGMA quick_check');
        const verdict = check.map((r) => r.quick_check).join('; ');
        if (verdict !== 'ok') throw new Error(`the copy fails quick_check: ${verdict.slice(0, 300)}`);
      } finally {
        await closeDatabase(copy);
      }
    },
  );
}
