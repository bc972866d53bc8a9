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

export class Unavailable extends DomainError {
  constructor(message: string, code = 'storage_unavailable') {
    super('unavailable', code, message);
  }
}

/** The configuration is unreadable or invalid; the message names the key and what is expected. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
