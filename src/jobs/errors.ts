/**
 * A handler's failure with a stable, machine-readable code (snake_case, e.g. `not_sqlite`,
 * `storage_error`), kept on the job as `error_code` next to the message. Transient: the job is
 * retried with backoff while attempts are left.
 */
export class JobError extends Error {
  override name = 'JobError';
  constructor(
    message: string,
    /** Stable snake_case code recorded as the job's error_code. */
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

/**
 * Thrown by a job handler when retrying cannot help (a file that is not SQLite, a key that does
 * not exist): the job goes to `failed` at once with this message and code. Any other error is transient.
 */
export class PermanentJobError extends JobError {
  override name = 'PermanentJobError';
}

/**
 * Thrown by a job handler when a service the job needs does not answer (storage down): nothing is
 * wrong with the job, so the run does not use up an attempt. It is retried with backoff (doubling,
 * at most a minute apart) for as long as the outage lasts, and runs as soon as the service is back.
 */
export class DependencyDownError extends JobError {
  override name = 'DependencyDownError';
}

/** The code a failure carries (a JobError's), else null. */
export function errorCode(err: unknown): string | null {
  return err instanceof JobError ? err.code : null;
}

/** The AbortSignal reason when a job ran past its time bound (a transient failure). */
export class JobTimeoutError extends JobError {
  override name = 'JobTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`job timed out after ${timeoutMs} ms`, 'timeout');
  }
}

/** The AbortSignal reason when the runner stops before the job ends (the job is left reclaimable). */
export class RunnerStoppedError extends Error {
  override name = 'RunnerStoppedError';
  constructor() {
    super('runner stopped before the job finished');
  }
}

/** The AbortSignal reason when this runner lost the job's lease (another runner may hold it now). */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
  constructor() {
    super('lease lost');
  }
}
