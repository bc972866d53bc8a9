import type { Database, Transaction } from '../db/index.ts';
import { claimJob, hasClaimableJob, type Lease } from '../db/jobs/claim.ts';
import { jobIn, runningJobs, takeBack, updateUnderLease, type JobUpdate } from '../db/jobs/lease.ts';
import { toJobInfo, type JobInfo, type JobProgress } from './job.ts';
import { readNodes } from '../db/nodes.ts';
import { ownerDeadReason, type NodeLiveness } from './lease-owner.ts';

/** Longest last_error kept. */
const MAX_ERROR_LENGTH = 4000;

export function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message || err.name : String(err);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 3)}...` : text;
}

export { leaseHeldQuery, type Lease } from '../db/jobs/claim.ts';

export type Outcome = 'done' | 'queued' | 'failed' | 'lost';

/**
 * Writes a handler hands back to be made in the same write transaction that checks the job's lease
 * and marks it done: results and "done" commit together, or not at all. It must use only the
 * transaction given (never db.writes.run: the write path is already held).
 */
export type JobCommit = (transaction: Transaction) => Promise<void>;

/** A failure as the job records it. */
export interface Failure {
  message: string;
  code: string | null;
}

/**
 * The runner's view of the job table: claims, lease renewals and outcomes (the statements are in
 * src/db/jobs/). Reads go to the read connection; every write goes through the process's one write
 * path and is fenced by the lease, so a run whose lease was taken over can no longer change the job.
 */
export class RunnerStore {
  constructor(private readonly db: Database) {}

  /** Cheap read before taking the write lock: is a job of these kinds due? */
  hasClaimable(kinds: string[]): Promise<boolean> {
    return hasClaimableJob(this.db, kinds);
  }

  /**
   * Claims the next due job of these kinds (round robin between fairness groups) in one write
   * transaction (src/db/jobs/claim.ts).
   */
  async claim(kinds: string[], owner: string, leaseMs: number): Promise<JobInfo | null> {
    if (kinds.length === 0) return null;
    return this.db.writes.run(async (transaction) => {
      const row = await claimJob(this.db, transaction, kinds, owner, leaseMs);
      return row ? toJobInfo(row) : null;
    });
  }

  /** Extends the lease; false when it is no longer ours. */
  renew(lease: Lease, leaseMs: number): Promise<boolean> {
    return this.db.writes.run((transaction) => updateUnderLease(this.db, transaction, lease, { leaseMs }));
  }

  saveProgress(lease: Lease, progress: JobProgress): Promise<boolean> {
    return this.db.writes.run((transaction) => updateUnderLease(this.db, transaction, lease, { progress: JSON.stringify(progress) }));
  }

  async #finish(lease: Lease, change: JobUpdate, outcome: Outcome, progress?: JobProgress, commit?: JobCommit): Promise<Outcome> {
    const update: JobUpdate = { ...change, releaseLease: true };
    if (progress !== undefined) update.progress = JSON.stringify(progress);
    return this.db.writes.run(async (transaction) => {
      if (!(await updateUnderLease(this.db, transaction, lease, update))) return 'lost';
      // Still ours under the write lock: the handler's results commit with "done", or roll back with it.
      if (commit) await commit(transaction);
      return outcome;
    });
  }

  /** Done; `commit` runs in the same transaction, only if the lease is still ours. Throws (nothing written) when commit throws. */
  complete(lease: Lease, progress?: JobProgress, commit?: JobCommit): Promise<Outcome> {
    return this.#finish(lease, { state: 'done', finished: true }, 'done', progress, commit);
  }

  /** Failed for good, whatever the attempts left. */
  fail(lease: Lease, failure: Failure, progress?: JobProgress): Promise<Outcome> {
    return this.#finish(lease, { state: 'failed', finished: true, lastError: failure.message, errorCode: failure.code }, 'failed', progress);
  }

  /** A transient failure: queued again after delayMs, or failed when no attempt is left. */
  retryOrFail(lease: Lease, maxAttempts: number, failure: Failure, delayMs: number, progress?: JobProgress): Promise<Outcome> {
    if (lease.attempts >= maxAttempts) {
      return this.fail(lease, { ...failure, message: `gave up after ${lease.attempts} attempts: ${failure.message}` }, progress);
    }
    return this.#finish(
      lease,
      { state: 'queued', runAfterMs: delayMs, lastError: failure.message, errorCode: failure.code },
      'queued',
      progress,
    );
  }

  /**
   * The run failed because the database went away under it: queued again after delayMs without
   * using up an attempt (attempts back to what they were before this claim).
   */
  retryUncounted(lease: Lease, failure: Failure, delayMs: number, progress?: JobProgress): Promise<Outcome> {
    return this.#finish(
      lease,
      { state: 'queued', attempts: lease.attempts - 1, runAfterMs: delayMs, lastError: failure.message, errorCode: failure.code },
      'queued',
      progress,
    );
  }

  /** Gives the job back untouched (the runner is stopping): claimable at once, attempts kept. */
  release(lease: Lease, progress?: JobProgress): Promise<Outcome> {
    return this.#finish(lease, { state: 'queued', runAfterMs: 0 }, 'queued', progress);
  }

  /**
   * Running jobs whose lease expired or whose owner is known dead (by the node registry: see
   * lease-owner.ts) go back to the queue (attempts kept), or to failed when their owner died on the
   * last attempt. Reads first; writes only when there is something to reclaim. Returns how many
   * jobs it reclaimed.
   */
  async reclaimStale(self: string, nodeStaleMs: number, kinds: string[]): Promise<number> {
    // Only jobs of the kinds this runner handles: another runner of this process (notifications
    // beside captures) must not take back a capture whose lease ran out while the database was away.
    if (kinds.length === 0) return 0;
    const running = await runningJobs(this.db, kinds);
    if (running.length === 0) return 0;
    const { now, nodes } = await readNodes(this.db);
    const liveness: NodeLiveness = { now, nodes, staleMs: nodeStaleMs };
    const deadWhy = (j: { leaseOwner: string | null; startedAt: Date | null }) => (j.leaseOwner === null ? null : ownerDeadReason(j.leaseOwner, j.startedAt, liveness));
    const stale = running.filter((j) => j.leaseOwner !== self && (j.leaseExpiresAt === null || j.leaseExpiresAt <= now || deadWhy(j) !== null));
    if (stale.length === 0) return 0;
    let reclaimed = 0;
    await this.db.writes.run(async (transaction) => {
      for (const seen of stale) {
        // Re-read under the write lock: only the lease we judged may be taken back.
        const job = await jobIn(this.db, transaction, seen.id);
        if (!job || job.state !== 'running' || job.lease_owner !== seen.leaseOwner) continue;
        const expired = job.lease_expires_at === null || job.lease_expires_at <= now;
        const dead = deadWhy({ leaseOwner: job.lease_owner, startedAt: job.started_at === null ? null : new Date(job.started_at) });
        if (!expired && dead === null) continue;
        const why = `lease of ${job.lease_owner ?? 'unknown owner'} lost (${dead ?? 'lease expired: process died or stalled'}) during attempt ${job.attempts}`;
        await takeBack(
          job,
          transaction,
          job.attempts >= job.max_attempts
            ? { state: 'failed', at: now, lastError: `gave up after ${job.attempts} attempts: ${why}`, errorCode: 'lease_lost' }
            : { state: 'queued', at: now, lastError: why, errorCode: 'lease_lost' },
        );
        reclaimed++;
      }
    });
    return reclaimed;
  }
}
