/**
 * Domain errors. Services, storage and ingest throw these; the HTTP edge (src/server/ext/errors.ts) and the CLI
 * (src/cli/fail.ts) map them to a status or an exit line in one place each.
 */
export type ErrorKind =
  | 'invalid' // 400: the request is malformed or a field is wrong
  | 'unauthenticated' // 401: no, invalid, expired or revoked credentials
  | 'forbidden' // 403: authenticated, but not allowed
  | 'not_found' // 404
  | 'conflict' // 409: clashes with what is stored
  | 'too_large' // 413
  | 'unprocessable' // 422: well-formed but refused
  | 'throttled' // 429
  | 'insufficient_storage' // 507: refused before any byte is sent, to keep the gateway's free-space floor
  | 'unavailable'; // 503: a dependency (storage) is down

export interface ErrorDetail {
  field?: string;
  message: string;
}

export class DomainError extends Error {
  override name = 'DomainError';
  constructor(
    readonly kind: ErrorKind,
    /** Stable snake_case code for clients and scripts. */
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
  }
}

export class InvalidInput extends DomainError {
  constructor(message: string, details: ErrorDetail[] = [], code = 'invalid_params') {
    super('invalid', code, message, details);
  }
}

export class Unauthenticated extends DomainError {
  constructor(code: string, message: string) {
    super('unauthenticated', code, message);
  }
}

export class Forbidden extends DomainError {
  constructor(message: string, code = 'forbidden') {
    super('forbidden', code, message);
  }
}

export class NotFound extends DomainError {
  constructor(what: string, code = 'not_found') {
    super('not_found', code, `${what} not found`);
  }
}

export class Conflict extends DomainError {
  constructor(message: string, code = 'conflict') {
    super('conflict', code, message);
  }
}

export class TooLarge extends DomainError {
  constructor(message: string, code = 'too_large') {
    super('too_large', code, message);
  }
}

export class Unprocessable extends DomainError {
  constructor(message: string, code = 'unprocessable') {
    super('unprocessable', code, message);
  }
}

export class Throttled extends DomainError {
  constructor(
    message: string,
    /** Seconds until a retry may succeed. */
    readonly retryAfterS: number,
    code = 'too_many_requests',
  ) {
    super('throttled', code, message);
  }
}

/** Seconds a client is told to wait (Retry-After) when storage does not answer. */
export const STORAGE_RETRY_AFTER_S = 5;

/** A dependency (storage; the database: DatabaseUnavailable) does not answer: nothing was stored, retry after retryAfterS seconds. */
export class Unavailable extends DomainError {
  constructor(
    message: string,
    code = 'storage_unavailable',
    /** Seconds until a retry may succeed (the Retry-After header). */
    readonly retryAfterS = STORAGE_RETRY_AFTER_S,
  ) {
    super('unavailable', code, message);
  }
}

/**
 * The database server does not answer, refuses or drops the connection, has no connection left, or
 * did not take a write within its lock or statement timeout: nothing of the request was stored. A
 * client may retry after retryAfterS seconds.
 */
export class DatabaseUnavailable extends Unavailable {
  constructor(
    message: string,
    code: 'database_unavailable' | 'database_busy' = 'database_unavailable',
    retryAfterS = 1,
    /** The driver's error (for the log line, never for the client). */
    cause?: unknown,
  ) {
    super(message, code, retryAfterS);
    if (cause !== undefined) this.cause = cause;
  }
}

/** Storing what is asked would take the gateway's disk below its floor: refused before any byte is sent. */
export class InsufficientStorage extends DomainError {
  constructor(message: string, code = 'insufficient_storage') {
    super('insufficient_storage', code, message);
  }
}

/** The disk holding data_dir is full: the write was not stored (nothing acknowledged before is lost). */
export class DiskFull extends DomainError {
  constructor(message = 'the disk holding the data directory is full: the write was not stored, retry later') {
    super('unavailable', 'disk_full', message);
  }
}

/** The database (or its -wal/-shm file) cannot be written by this process: wrong owner or mode, read-only mount. */
export class DatabaseReadOnly extends DomainError {
  constructor(message = 'the database cannot be written (wrong file owner or read-only file system): the write was not stored') {
    super('unavailable', 'database_read_only', message);
  }
}

/** The disk holding data_dir fails reads or writes (I/O errors): the write was not stored. */
export class DiskFailing extends DomainError {
  constructor(message = 'the disk holding the data directory fails (I/O error): the write was not stored; check the disk (dmesg)') {
    super('unavailable', 'disk_failing', message);
  }
}

/** The configuration is unreadable or invalid; the message names the key and what is expected. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * `rigd serve` cannot take its address or open its database. The message says what and where in one
 * line (e.g. "cannot listen on 0.0.0.0:3000: address already in use"); the process exits 1.
 */
export class CannotStart extends Error {
  override name = 'CannotStart';
  constructor(
    message: string,
    /** The errno or SQLite code behind it (EADDRINUSE, SQLITE_CANTOPEN...). */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The environment file (/etc/rigd/rigd.env) exists but cannot be read, or a named one is missing. */
export class EnvFileError extends ConfigError {
  override name = 'EnvFileError';
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message);
  }
}
