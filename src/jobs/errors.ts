/**
 * Thrown by a job handler when retrying cannot help (a file that is not SQLite, a key that does
 * not exist): the job goes to `failed` at once with this message. Any other error is transient.
 */
export class PermanentJobError extends Error {
  override name = 'PermanentJobError';
}

/** The AbortSignal reason when a job ran past its time bound (a transient failure). */
export class JobTimeoutError extends Error {
  override name = 'JobTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`job timed out after ${timeoutMs} ms`);
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
