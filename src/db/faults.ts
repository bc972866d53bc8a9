/**
 * Database errors that are faults of the host, not of the request: a full disk and a database this
 * process cannot write. They become typed domain errors (503 `disk_full`, 503 `database_read_only`)
 * instead of a 500, whichever layer meets them first.
 */
import { statfsSync } from 'node:fs';
import { DatabaseReadOnly, DiskFull, DomainError } from '../errors.ts';

/** Below this many free bytes an I/O error of SQLite counts as the disk being full. */
const NEARLY_FULL_BYTES = 1024 * 1024;

/** The SQLite (or errno) code of err, looking through Sequelize's wrappers (parent, original, cause). */
export function faultCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  let e = err as { code?: unknown; parent?: unknown; original?: unknown; cause?: unknown } | undefined;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    if (typeof e.code === 'string' && /^(SQLITE_|E[A-Z]+$)/.test(e.code)) return e.code;
    e = (e.parent ?? e.original ?? e.cause) as typeof e;
  }
  return undefined;
}

/** Free bytes for an unprivileged writer on the file system holding dir, or null when unknown. */
export function freeBytes(dir: string): number | null {
  try {
    const st = statfsSync(dir);
    return Number(st.bavail) * Number(st.bsize);
  } catch {
    return null;
  }
}

/**
 * The domain error a database error stands for, or null when it is not a host fault. dataDir (when
 * given) tells an I/O error on a full disk (SQLite reports SQLITE_IOERR when growing -shm fails) from
 * any other I/O error.
 */
export function databaseFault(err: unknown, dataDir?: string): DomainError | null {
  if (err instanceof DomainError) return null;
  const code = faultCode(err);
  if (code === undefined) return null;
  if (code.startsWith('SQLITE_FULL') || code === 'ENOSPC' || code === 'EDQUOT') return new DiskFull();
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') return new DatabaseReadOnly();
  if (code.startsWith('SQLITE_IOERR') && dataDir !== undefined) {
    const free = freeBytes(dataDir);
    if (free !== null && free < NEARLY_FULL_BYTES) return new DiskFull();
  }
  return null;
}
