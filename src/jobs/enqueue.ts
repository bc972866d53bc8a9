import type { Transaction } from '../db/index.ts';
import { insertJob } from '../db/jobs/insert.ts';
import { toJobInfo, type JobInfo } from './job.ts';
import { notifyOnCommit } from '../db/notify.ts';
import { JOBS_CHANNEL, notifyJobEnqueued } from './wake-up.ts';

/** Used when the caller does not pass one; services pass `config.ingest.max_attempts`. */
export const DEFAULT_MAX_ATTEMPTS = 5;

export interface EnqueueOptions {
  /** The caller's write transaction (from `db.writes.run`): the job commits or rolls back with it. */
  transaction: Transaction;
  /** @default DEFAULT_MAX_ATTEMPTS */
  maxAttempts?: number;
  /** Not before this time. @default now, by the database's clock (src/db/clock.ts) */
  runAfter?: Date;
  /**
   * Fairness group: claims go round robin between groups (the group with the fewest running jobs,
   * then the one served longest ago), so one group's many jobs cannot hold back another's next one.
   * @default none: ranks as a group never served
   */
  group?: string;
}

/**
 * Inserts a queued job inside the caller's transaction, so a row and the job that processes it
 * commit together. Runners in this process are woken when the transaction commits, and on
 * PostgreSQL those of every other process too (a NOTIFY sent in the transaction).
 */
export async function enqueue<P>(kind: string, payload: P, opts: EnqueueOptions): Promise<JobInfo<P>> {
  const { transaction } = opts;
  if (!transaction) throw new TypeError('enqueue needs the caller\'s transaction');
  const maxAttempts = opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new RangeError('maxAttempts must be a positive integer');
  const text = JSON.stringify(payload);
  if (text === undefined) throw new TypeError('job payload must be JSON');
  const row = await insertJob(transaction, { kind, payload: text, maxAttempts, runAfter: opts.runAfter, group: opts.group ?? null });
  await notifyOnCommit(transaction, JOBS_CHANNEL, kind);
  transaction.afterCommit(() => notifyJobEnqueued());
  return toJobInfo<P>(row);
}
