import type { BackoffOptions } from './backoff.ts';
import type { JobInfo, JobProgress } from './job.ts';
import type { JobCommit, Lease } from './store.ts';

/** The types of the job runner's interface (src/jobs/runner.ts). */

/** What a handler gets besides the job. */
export interface JobContext {
  /** Aborts on the job's time bound, on shutdown, or when the lease is lost: stop work and throw. */
  signal: AbortSignal;
  /** Records progress (throttled; the last report is kept with the outcome). */
  progress(progress: JobProgress): void;
  /** This run's claim (job id, owner, attempts), for work that must check it holds the lease (leaseHeldQuery). */
  lease?: Lease;
}

/**
 * Runs one job. Must be idempotent: a job whose process died mid-run runs again. It may resolve
 * with a JobCommit: the runner runs it inside the write transaction that checks the lease and marks
 * the job done, so the handler's results are recorded if and only if the job ends done under this
 * claim (a run that lost its lease records nothing). Failures are thrown: a JobError's code is kept
 * as the job's error_code; PermanentJobError fails the job at once, anything else is retried.
 */
export type JobHandler<P = unknown> = (job: JobInfo<P>, ctx: JobContext) => Promise<void | JobCommit>;

/** The part of a logger the runner uses (src/log.ts's Logger fits). */
export interface RunnerLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}


export interface RunnerOptions {
  /** Jobs run at once (`ingest.concurrency`). @default 2 */
  concurrency?: number;
  /** A job running longer is aborted and retried (`ingest.job_timeout_ms`). @default 600000 */
  jobTimeoutMs?: number;
  /**
   * Poll for due jobs and stale leases at this interval, in ms. Jobs enqueued in this process, and on
   * PostgreSQL in any process, wake the runner at once; polling is the fallback. @default 1000
   */
  pollMs?: number;
  /**
   * The name of the node the runner runs in (rigd serve's instance id): the first part of its lease
   * owner; a function is asked at start(). @default ''
   */
  node?: string | (() => string);
  /**
   * A node of the registry whose heartbeat is older than this is dead: its jobs are reclaimed
   * before their leases expire (rigd serve: 3 x cluster.heartbeat_s). @default 15000
   */
  nodeStaleMs?: number;
  /** Lease length in ms; renewed every third of it while the job runs. @default 30000 */
  leaseMs?: number;
  /** Retry delays after transient failures. */
  backoff?: BackoffOptions;
  /** At most one progress write per interval, in ms. @default 500 */
  progressIntervalMs?: number;
  /** After aborting a job's signal, how long its handler may take to return, in ms. @default 5000 */
  abortGraceMs?: number;
  /** @default silent */
  logger?: RunnerLogger;
  /** Told each run's outcome and time in seconds (metrics); must not throw. */
  onOutcome?: (kind: string, outcome: RunOutcome, seconds: number) => void;
}

/** How one run of a job ended: done, failed for good, queued again (retry after a failure, or released at shutdown), or lost its lease. */
export type RunOutcome = 'done' | 'failed' | 'retry' | 'released' | 'lost';

export interface StopOptions {
  /** Running jobs get this long to finish before they are aborted and released, in ms. @default 30000 */
  timeoutMs?: number;
}

export interface StopResult {
  /** Every running job finished within the bound. */
  drained: boolean;
  /** Ids of jobs aborted and given back to the queue. */
  released: number[];
}
