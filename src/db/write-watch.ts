/**
 * Writes by other processes, heard without polling. SQLite: every committed write of any process
 * appends to the database's WAL file (data_dir/rigd.sqlite-wal, kept while rigd serve has the database
 * open), which the kernel reports to a file watch (inotify): the callback runs after such a change,
 * at most every WAKE_EVERY_MS. PostgreSQL: nothing here (NOTIFY does it, src/db/notify.ts).
 * A watch that cannot be set up or fails is given up silently: the caller's polling remains.
 */
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Database } from './index.ts';
import { forEngine } from './dialect/engine.ts';
import { DB_FILE } from './file.ts';

/**
 * Writes heard within this window make one call, at its end: a gateway whose rigs report many times
 * a second wakes a runner at most this often (one indexed query each), and a job waits at most this.
 */
const WAKE_EVERY_MS = 50;

/** How often a runner on SQLite looks for work when no write was heard (the fallback). */
export const SQLITE_POLL_MS = 200;

/** The polling a job runner needs on this engine besides its wake-ups (undefined: its default). */
export function runnerPollMs(db: Database): number | undefined {
  return forEngine<number | undefined>(db.dialect.name, { postgres: undefined, sqlite: SQLITE_POLL_MS });
}

/**
 * Calls `onWrite` after writes to the SQLite database in `dataDir` (by any process), at most once
 * per `windowMs`; returns the stop.
 */
export function watchWrites(db: Database, dataDir: string, onWrite: () => void, windowMs = WAKE_EVERY_MS): () => void {
  if (forEngine(db.dialect.name, { postgres: true, sqlite: false })) return () => {};
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    watcher = watch(path.join(path.resolve(dataDir), `${DB_FILE}-wal`), { persistent: false }, () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        onWrite();
      }, windowMs).unref();
    });
    watcher.on('error', () => watcher?.close());
  } catch {
    watcher = undefined;
  }
  return () => {
    watcher?.close();
    clearTimeout(timer);
  };
}

/**
 * Writes heard within this window end a wait once, at its end: one commit's writes to the WAL (its
 * frames, then the commit frame) are in by then, and on a gateway whose rigs write many times a
 * second a waiter reads at most this often (one indexed read each; its poll alone is every 50 ms).
 */
const COMMIT_WINDOW_MS = 10;

export interface WriteWaiter {
  /** Resolves at the first write heard since the last call (right away if one was), or after `ms`. */
  next(ms: number): Promise<void>;
  stop(): void;
}

/**
 * For a command that waits on what another process writes (`rigd ingest --wait` on rigd serve's
 * import): on SQLite it reads again as soon as a commit is heard instead of at its next poll; on
 * PostgreSQL (or with no watch) `next` is the poll alone.
 */
export function writeWaiter(db: Database, dataDir: string): WriteWaiter {
  let heard = false;
  let wake: (() => void) | undefined;
  const unwatch = watchWrites(
    db,
    dataDir,
    () => {
      heard = true;
      wake?.();
    },
    COMMIT_WINDOW_MS,
  );
  return {
    next(ms) {
      if (heard) {
        heard = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          wake = undefined;
          heard = false;
          resolve();
        }
        wake = done;
      });
    },
    stop: () => {
      unwatch();
      wake?.();
    },
  };
}
