import type { Transaction, WhereOptions } from 'sequelize';
import { dbTime } from '../clock.ts';
import type { Database } from '../index.ts';
import type { Job, JobState } from '../models/job.ts';
import type { Lease } from './claim.ts';

/**
 * Writes of a claimed job's run: each is fenced by its lease (id, owner, attempts, still running),
 * so a run whose lease was taken over can no longer change the job. Times by the database's clock
 * (src/db/clock.ts): `afterMs` fields are now + that many ms.
 */

/** What a run changes on its job row. */
export interface JobUpdate {
  state?: JobState;
  /** Attempts as they were before this claim (a retry that does not count). */
  attempts?: number;
  /** run_after = now + this many ms. */
  runAfterMs?: number;
  /** finished_at = now. */
  finished?: boolean;
  /** lease_expires_at = now + this many ms. */
  leaseMs?: number;
  /** Gives the lease up (owner and expiry cleared). */
  releaseLease?: boolean;
  lastError?: string;
  errorCode?: string | null;
  /** The progress as JSON text. */
  progress?: string;
}

function leaseWhere(lease: Lease): WhereOptions<Job> {
  return { id: lease.id, state: 'running', lease_owner: lease.owner, attempts: lease.attempts };
}

/** Applies `change` in transaction only while `lease` still holds the job: true when it did. */
export async function updateUnderLease(db: Database, transaction: Transaction, lease: Lease, change: JobUpdate): Promise<boolean> {
  const values: Record<string, unknown> = {};
  if (change.state !== undefined) values.state = change.state;
  if (change.attempts !== undefined) values.attempts = change.attempts;
  if (change.runAfterMs !== undefined) values.run_after = dbTime(db.sequelize, change.runAfterMs);
  if (change.finished) values.finished_at = dbTime(db.sequelize);
  if (change.leaseMs !== undefined) values.lease_expires_at = dbTime(db.sequelize, change.leaseMs);
  if (change.lastError !== undefined) values.last_error = change.lastError;
  if (change.errorCode !== undefined) values.error_code = change.errorCode;
  if (change.progress !== undefined) values.progress = change.progress;
  if (change.releaseLease) Object.assign(values, { lease_owner: null, lease_expires_at: null });
  const [n] = await db.models.Job.update(values, { where: leaseWhere(lease), transaction });
  return n === 1;
}

/** A running job as the reclaim judges it. */
export interface RunningJob {
  id: number;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  startedAt: Date | null;
}

/** Running jobs of these kinds (read connection). */
export async function runningJobs(db: Database, kinds: string[]): Promise<RunningJob[]> {
  if (kinds.length === 0) return [];
  const rows = await db.models.Job.findAll({
    attributes: ['id', 'lease_owner', 'lease_expires_at', 'started_at'],
    where: { state: 'running', kind: kinds },
  });
  return rows.map((r) => ({
    id: r.id,
    leaseOwner: r.lease_owner,
    leaseExpiresAt: r.lease_expires_at,
    startedAt: r.started_at === null ? null : new Date(r.started_at),
  }));
}

/** The job row in transaction (re-read under the write lock). */
export function jobIn(db: Database, transaction: Transaction, id: number): Promise<Job | null> {
  return db.models.Job.findByPk(id, { transaction });
}

/** Takes a job's lease back: queued again at `at`, or failed at `at`; the lease cleared. */
export async function takeBack(job: Job, transaction: Transaction, to: { state: 'queued' | 'failed'; at: Date; lastError: string; errorCode: string }): Promise<void> {
  const values =
    to.state === 'failed'
      ? { state: 'failed' as const, finished_at: to.at, last_error: to.lastError, error_code: to.errorCode }
      : { state: 'queued' as const, run_after: to.at, last_error: to.lastError, error_code: to.errorCode };
  await job.update({ ...values, lease_owner: null, lease_expires_at: null }, { transaction });
}
