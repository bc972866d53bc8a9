/**
 * Database errors that are faults of the host, not of the request: a full disk and a database this
 * process cannot write. They become typed domain errors (503 `disk_full`, 503 `database_read_only`)
 * instead of a 500, whichever layer meets them first.
 */
import { statfsSync } from 'node:fs';
import { DatabaseReadOnly, DiskFailing, DiskFull, DomainError, Unavailable } from '../errors.ts';
import { readOnlyMount } from './read-only-mount.ts';

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
  if (sqlState(err) !== undefined) return postgresFault(err);
  const code = faultCode(err);
  if (code === undefined) return null;
  if (code.startsWith('SQLITE_FULL') || code === 'ENOSPC' || code === 'EDQUOT') return new DiskFull();
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') return new DatabaseReadOnly();
  if (code.startsWith('SQLITE_IOERR') && dataDir !== undefined) {
    const free = freeBytes(dataDir);
    if (free !== null && free < NEARLY_FULL_BYTES) return new DiskFull();
  }
  // An I/O error on a file system the kernel made read-only (ext4 errors=remount-ro) is that; any other, a failing disk.
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO') {
    const ro = dataDir === undefined ? null : readOnlyMount(dataDir);
    if (ro) return new DatabaseReadOnly(`the file system holding the data directory (${ro.mountPoint} on ${ro.source}) went read-only: the write was not stored; check the disk (dmesg), then remount or replace it`);
    return new DiskFailing();
  }
  return null;
}

/** The PostgreSQL SQLSTATE (five characters) of err, looking through Sequelize's wrappers. */
export function sqlState(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  let e = err as { code?: unknown; parent?: unknown; original?: unknown; cause?: unknown } | undefined;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && !e.code.startsWith('E')) return e.code;
    e = (e.parent ?? e.original ?? e.cause) as typeof e;
  }
  return undefined;
}

/** Errno codes and Sequelize error names that mean the database server cannot be reached. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);
const UNREACHABLE_NAMES = new Set(['SequelizeConnectionRefusedError', 'SequelizeHostNotFoundError', 'SequelizeHostNotReachableError', 'SequelizeConnectionTimedOutError', 'SequelizeConnectionAcquireTimeoutError']);

/**
 * The PostgreSQL host faults: 53100 disk_full, 25006 read_only_sql_transaction (a standby, or
 * default_transaction_read_only), the server gone (connection refused, shut down: 57P01-57P03,
 * class 08) as 503 database_unavailable. Null for anything else.
 */
export function postgresFault(err: unknown): DomainError | null {
  if (err instanceof DomainError) return null;
  const state = sqlState(err);
  if (state === '53100') return new DiskFull('the database server\'s disk is full: the write was not stored, retry later');
  if (state === '25006') return new DatabaseReadOnly('the database server takes no writes (read-only transaction or a standby): the write was not stored');
  if (state && (state.startsWith('08') || /^57P0[123]$/.test(state) || state === '53300')) return databaseUnavailable();
  const code = faultCode(err);
  const names = new Set<string>();
  for (let e = err as { name?: unknown; parent?: unknown } | undefined, i = 0; e && i < 4; i++, e = e.parent as typeof e) if (typeof e.name === 'string') names.add(e.name);
  if ((code && UNREACHABLE.has(code)) || [...names].some((n) => UNREACHABLE_NAMES.has(n))) return databaseUnavailable();
  return null;
}

/** 503 database_unavailable: the database server does not answer. */
export function databaseUnavailable(): Unavailable {
  return new Unavailable('the database server is unavailable: the request was not stored, retry later', 'database_unavailable');
}
