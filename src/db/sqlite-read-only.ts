/**
 * A SQLite file opened for reading only, writing nothing next to it: SQLITE_OPEN_READONLY and
 * `query_only`, so any write is refused by SQLite itself. With no `-wal` beside the file (no writer
 * connected, last close clean) the file is all there is and it is read as immutable (no `-shm`, no
 * locks); with a `-wal` (a running rigd serve, or a crash) it is read next to it.
 */
import { existsSync } from 'node:fs';
import type { Database } from 'sqlite3';

export interface ReadOnlySqlite {
  readonly file: string;
  readonly db: Database;
  /** Idempotent. */
  close(): Promise<void>;
}

/** noAttach: SQLITE_LIMIT_ATTACHED 0 as well (ATTACH and VACUUM INTO fail), for SQL from the operator. */
export async function openSqliteReadOnly(file: string, opts: { noAttach?: boolean } = {}): Promise<ReadOnlySqlite> {
  const { default: sqlite3 } = await import('sqlite3');
  const immutable = !existsSync(`${file}-wal`);
  const uri = `file:${encodeURI(file).replace(/\?/g, '%3f').replace(/#/g, '%23')}?mode=ro${immutable ? '&immutable=1' : ''}`;
  const db = await new Promise<Database>((resolve, reject) => {
    const conn = new sqlite3.Database(uri, sqlite3.OPEN_READONLY | sqlite3.OPEN_URI, (err) => (err ? reject(err) : resolve(conn)));
  });
  db.configure('busyTimeout', 5000);
  if (opts.noAttach) db.configure('limit', sqlite3.LIMIT_ATTACHED, 0);
  await new Promise<void>((resolve, reject) => db.run('PRAGMA query_only=ON', (err) => (err ? reject(err) : resolve())));
  let closed = false;
  return {
    file,
    db,
    close: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        closed = true;
        db.close(() => resolve());
      }),
  };
}
