/**
 * Database errors that are faults of the host, not of the request: a full disk, a database this
 * process cannot write, a database server that is gone or did not take a write in time. They become
 * typed domain errors (503 `disk_full`, `database_read_only`, `database_unavailable`,
 * `database_busy`) instead of a 500, whichever layer meets them first.
 */
import { statfsSync } from 'node:fs';
import { ConnectionError, DatabaseError } from 'sequelize';
import { DatabaseReadOnly, DatabaseUnavailable, DiskFailing, DiskFull, DomainError } from '../errors.ts';
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
  if (code === undefined) return postgresFault(err);
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
  // The server gone (refused, reset, unreachable): PostgreSQL's connection errors carry an errno, not a SQLSTATE.
  return postgresFault(err);
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
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);
const UNREACHABLE_NAMES = new Set([
  'SequelizeConnectionError',
  'SequelizeConnectionRefusedError',
  'SequelizeHostNotFoundError',
  'SequelizeHostNotReachableError',
  'SequelizeConnectionTimedOutError',
  'SequelizeConnectionAcquireTimeoutError',
]);
/** pg's own messages for a connection that broke (they carry no code). */
const LOST_CONNECTION = /^(Connection terminated|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|timeout expired|Query read timeout|connection timeout)/;

/**
 * SQLSTATEs of a server that is gone or going (class 08 connection exception; 57P01-57P03 admin,
 * crash or cannot-connect-now shutdown; 57P05 idle session timeout; 25P03 idle in transaction
 * timeout; 53300 too many connections) and of a write that waited past its bounds (55P03
 * lock_not_available, lock_timeout; 57014 query_canceled, statement_timeout).
 */
function unavailableState(state: string): 'database_unavailable' | 'database_busy' | null {
  if (state.startsWith('08') || /^57P0[1235]$/.test(state) || state === '25P03' || state === '53300') return 'database_unavailable';
  if (state === '55P03' || state === '57014') return 'database_busy';
  return null;
}

/** The messages of err and the errors it wraps, for pg's codeless connection errors. */
function messages(err: unknown): string[] {
  const out: string[] = [];
  const seen = new Set<unknown>();
  for (let e = err as { message?: unknown; parent?: unknown; original?: unknown; cause?: unknown } | undefined; e && typeof e === 'object' && !seen.has(e); e = (e.parent ?? e.original ?? e.cause) as typeof e) {
    seen.add(e);
    if (typeof e.message === 'string') out.push(e.message);
  }
  return out;
}

/**
 * The PostgreSQL host faults: 53100 disk_full, 25006 read_only_sql_transaction (a standby, or
 * default_transaction_read_only), the server gone or out of connections as 503
 * database_unavailable, a write past lock_timeout or statement_timeout as 503 database_busy.
 * Null for anything else.
 */
export function postgresFault(err: unknown): DomainError | null {
  if (err instanceof DomainError) return null;
  const state = sqlState(err);
  if (state === '53100') return new DiskFull('the database server\'s disk is full: the write was not stored, retry later');
  if (state === '25006') return new DatabaseReadOnly('the database server takes no writes (read-only transaction or a standby): the write was not stored');
  const kind = state ? unavailableState(state) : null;
  if (kind === 'database_busy') return databaseBusy(err);
  if (kind) return databaseUnavailable(err);
  const code = faultCode(err);
  const names = new Set<string>();
  for (let e = err as { name?: unknown; parent?: unknown } | undefined, i = 0; e && i < 4; i++, e = e.parent as typeof e) if (typeof e.name === 'string') names.add(e.name);
  if ((code && UNREACHABLE.has(code)) || [...names].some((n) => UNREACHABLE_NAMES.has(n))) return databaseUnavailable(err);
  if (messages(err).some((m) => LOST_CONNECTION.test(m))) return databaseUnavailable(err);
  return null;
}

/**
 * The database driver failed a statement (Sequelize's DatabaseError or ConnectionError: disk full,
 * I/O error, busy, connection gone) or SQLite answered with an error code: not a refusal a
 * service threw on purpose.
 */
export function isDriverFailure(err: unknown): boolean {
  if (err instanceof DatabaseError || err instanceof ConnectionError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_');
}

/** True when err means the database server could not be reached or did not take the work in time (not the request's fault). */
export function isDatabaseUnavailable(err: unknown): boolean {
  const fault = err instanceof DatabaseUnavailable ? err : postgresFault(err);
  return fault instanceof DatabaseUnavailable;
}

/** 503 database_unavailable: the database server does not answer. */
export function databaseUnavailable(cause?: unknown): DatabaseUnavailable {
  return new DatabaseUnavailable('the database server is unavailable: the request was not stored, retry later', 'database_unavailable', 1, cause);
}

/** 503 database_busy: a write waited past database.lock_timeout_s or ran past database.statement_timeout_s. */
export function databaseBusy(cause?: unknown): DatabaseUnavailable {
  return new DatabaseUnavailable('the database did not take the write within its lock or statement timeout (another node may hold the rows): the request was not stored, retry later', 'database_busy', 1, cause);
}

/**
 * Episodes of one kind of fault, for logging one line per episode instead of one per request: an
 * episode begins at a fault with none in the last quietMs, and lasts while faults keep coming.
 */
export class FaultEpisodes {
  readonly #last = new Map<string, number>();
  #suppressed = new Map<string, number>();

  constructor(private readonly quietMs = 10_000) {}

  /** Records a fault of `kind` now: true when it begins an episode (log it), false while one goes on. */
  begins(kind: string, now = Date.now()): boolean {
    const last = this.#last.get(kind);
    this.#last.set(kind, now);
    if (last !== undefined && now - last < this.quietMs) {
      this.#suppressed.set(kind, (this.#suppressed.get(kind) ?? 0) + 1);
      return false;
    }
    this.#suppressed.set(kind, 0);
    return true;
  }

  /** Faults of `kind` not logged since its episode began. */
  suppressed(kind: string): number {
    return this.#suppressed.get(kind) ?? 0;
  }
}
