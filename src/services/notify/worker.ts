/**
 * Delivery as a background task of `rigd serve`: a JobRunner of its own for notify jobs, so a
 * notification never waits behind long capture ingests for a slot (the jobs table, its leases and
 * wake-ups are the ones the ingester uses: a job runs on one node at a time, and a dead node's job
 * is claimed again once its lease ends).
 */
import type { Config } from '../../config/schema.ts';
import type { Database } from '../../db/index.ts';
import { JobRunner, type RunnerLogger, type RunnerOptions } from '../../jobs/runner.ts';
import { deliveryHandler } from './deliver.ts';
import { NOTIFY_JOB, notifyBackoff, type NotifyJob } from './job.ts';

/** Deliveries at once on one node. */
const CONCURRENCY = 2;
/** How long SIGTERM lets running deliveries finish before they go back to the queue. */
const DRAIN_TIMEOUT_MS = 5_000;

export class NotifyWorker {
  readonly runner: JobRunner;

  constructor(
    db: Database,
    config: Readonly<Config>,
    private readonly log: RunnerLogger,
    runnerOptions: Partial<RunnerOptions> = {},
  ) {
    const attemptMs = Math.round(config.notify.timeout_s * 1000);
    this.runner = new JobRunner(db, {
      concurrency: CONCURRENCY,
      // An e-mail attempt may wait for the connection, the greeting and the answer in turn.
      jobTimeoutMs: 3 * attemptMs + 5_000,
      leaseMs: config.ingest.lease_s * 1000,
      backoff: notifyBackoff(config.notify),
      logger: log,
      ...runnerOptions,
    });
    this.runner.handle<NotifyJob>(NOTIFY_JOB, deliveryHandler(config, log));
  }

  start(): Promise<void> {
    return this.runner.start();
  }

  async stop(): Promise<void> {
    const { drained, released } = await this.runner.stop({ timeoutMs: DRAIN_TIMEOUT_MS });
    if (!drained) this.log.warn('notifications released to the queue at shutdown', { jobs: released });
  }
}
