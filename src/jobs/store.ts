import { Op, QueryTypes, type Transaction, type WhereOptions } from 'sequelize';
import { dbTime } from '../db/clock.ts';
import type { Database } from '../db/index.ts';
import type { Job } from '../db/models/job.ts';
import { toJobInfo, type JobInfo, type JobProgress } from './job.ts';
import { readNodes } from '../db/nodes.ts';
import { ownerDeadReason, type NodeLiveness } from './lease-owner.ts';

/** One claim of one job: the fencing token every later write of that run must match. */
export interface Lease {
  id: number;
  owner: string;
  /** The job's attempts right after this claim: a later claim of the same job has a larger one. */
  attempts: number;
}

/** Longest last_error kept. */
const MAX_ERROR_LENGTH = 4000;

/**
 * A statement (PostgreSQL, $n parameters) that finds the job's row only while `lease` still holds it,
 * and locks it: run inside another transaction on the same database just before its COMMIT, it makes
 * that COMMIT happen only under this claim (a node that lost the lease finds no row and must roll
 * back; a reclaim waits for the row lock until the commit is done).
 */
export function leaseHeldQuery(lease: Lease): { text: string; values: unknown[] } {
  return {
    text: "SELECT 1 FROM jobs WHERE id = $1 AND lease_owner = $2 AND attempts = $3 AND state = 'running' AND lease_expires_at > now() FOR UPDATE",
    values: [lease.id, lease.owner, lease.attempts],
  };
}

export function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message || err.name : String(err);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 3)}...` : text;
}

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
 * Every statement the runner runs against the job table. Reads go to the read connection;
 * every write goes through the process's one write path and is fenced by the lease, so a run
 * whose lease was taken over can no longer change the job.
 */
/**
 * Claim order, round robin between fairness groups (jobs.fair_group): the group with the fewest
 * running jobs, then the one whose last job started longest ago (never: first), then the oldest due
 * job. A job of no group ranks as a group never served (ahead of every group served before).
 */
const FAIR_ORDER = `(SELECT COUNT(*) FROM jobs r WHERE r.state = 'running' AND r.fair_group = q.fair_group),
               (SELECT MAX(r.started_at) FROM jobs r WHERE r.fair_group = q.fair_group) NULLS FIRST,
               q.run_after, q.id`;

/** The claim on PostgreSQL: FOR UPDATE SKIP LOCKED, times from the database's clock. */
const PG_CLAIM = `UPDATE jobs
    SET state = 'running', attempts = attempts + 1, lease_owner = :owner,
        lease_expires_at = now() + make_interval(secs => :leaseS), updated_at = now(), started_at = now(), finished_at = NULL
  WHERE id = (SELECT q.id FROM jobs q
               WHERE q.state = 'queued' AND q.run_after <= now() AND q.kind IN (:kinds)
               ORDER BY ${FAIR_ORDER} LIMIT 1
               FOR UPDATE OF q SKIP LOCKED)
    AND state = 'queued'
  RETURNING id`;

export class RunnerStore {
  constructor(private readonly db: Database) {}

  get #Job() {
    return this.db.models.Job;
  }

  #leaseWhere(lease: Lease): WhereOptions<Job> {
    return { id: lease.id, state: 'running', lease_owner: lease.owner, attempts: lease.attempts };
  }

  /** Cheap read before taking the write lock: is a job of these kinds due? */
  async hasClaimable(kinds: string[]): Promise<boolean> {
    if (kinds.length === 0) return false;
    const now = dbTime(this.db.sequelize);
    const row = await this.#Job.findOne({
      attributes: ['id'],
      where: { state: 'queued', run_after: { [Op.lte]: now }, kind: kinds },
    });
    return row !== null;
  }

  /**
   * Claims the next due job of these kinds (round robin between fairness groups, FAIR_ORDER) with one UPDATE. The outer `state = 'queued'` makes
   * it a compare-and-set on any database: on PostgreSQL a concurrent claimer re-checks it and
   * updates nothing (add FOR UPDATE SKIP LOCKED to the subquery there to avoid the retry);
   * on SQLite the write transaction is already exclusive. RETURNING: SQLite >= 3.35, PostgreSQL.
   */
  async claim(kinds: string[], owner: string, leaseMs: number): Promise<JobInfo | null> {
    if (kinds.length === 0) return null;
    return this.db.writes.run(async (transaction) => {
      const now = new Date();
      const rows =
        this.db.dialect.name === 'postgres'
          ? // PostgreSQL: concurrent claimers skip the row another one has locked instead of waiting
            // for it and updating nothing; the lease and due times are the server's clock.
            await this.db.sequelize.query<{ id: number }>(PG_CLAIM, { replacements: { owner, leaseS: leaseMs / 1000, kinds }, type: QueryTypes.SELECT, transaction })
          : await this.db.sequelize.query<{ id: number }>(
              `UPDATE jobs
            SET state = 'running', attempts = attempts + 1, lease_owner = :owner,
                lease_expires_at = :expires, updated_at = :now, started_at = :now, finished_at = NULL
          WHERE id = (SELECT q.id FROM jobs q
                       WHERE q.state = 'queued' AND q.run_after <= :now AND q.kind IN (:kinds)
                       ORDER BY ${FAIR_ORDER} LIMIT 1)
            AND state = 'queued'
          RETURNING id`,
              {
                replacements: { owner, now, expires: new Date(now.getTime() + leaseMs), kinds },
                type: QueryTypes.SELECT,
                transaction,
              },
            );
      if (rows.length === 0) return null;
      const row = await this.#Job.findByPk(rows[0].id, { transaction });
      return row ? toJobInfo(row) : null;
    });
  }

  /** Extends the lease; false when it is no longer ours. */
  async renew(lease: Lease, leaseMs: number): Promise<boolean> {
    const [n] = await this.db.writes.run((transaction) =>
      this.#Job.update(
        { lease_expires_at: dbTime(this.db.sequelize, leaseMs) },
        { where: this.#leaseWhere(lease), transaction },
      ),
    );
    return n === 1;
  }

  async saveProgress(lease: Lease, progress: JobProgress): Promise<boolean> {
    const [n] = await this.db.writes.run((transaction) =>
      this.#Job.update({ progress: JSON.stringify(progress) }, { where: this.#leaseWhere(lease), transaction }),
    );
    return n === 1;
  }

  async #finish(lease: Lease, values: Partial<Record<keyof Job, unknown>>, outcome: Outcome, progress?: JobProgress, commit?: JobCommit): Promise<Outcome> {
    const update = { ...values, lease_owner: null, lease_expires_at: null } as Record<string, unknown>;
    if (progress !== undefined) update.progress = JSON.stringify(progress);
    return this.db.writes.run(async (transaction) => {
      const [n] = await this.#Job.update(update, { where: this.#leaseWhere(lease), transaction });
      if (n !== 1) return 'lost';
      // Still ours under the write lock: the handler's results commit with "done", or roll back with it.
      if (commit) await commit(transaction);
      return outcome;
    });
  }

  /** Done; `commit` runs in the same transaction, only if the lease is still ours. Throws (nothing written) when commit throws. */
  complete(lease: Lease, progress?: JobProgress, commit?: JobCommit): Promise<Outcome> {
    return this.#finish(lease, { state: 'done', finished_at: dbTime(this.db.sequelize) }, 'done', progress, commit);
  }

  /** Failed for good, whatever the attempts left. */
  fail(lease: Lease, failure: Failure, progress?: JobProgress): Promise<Outcome> {
    return this.#finish(lease, { state: 'failed', finished_at: dbTime(this.db.sequelize), last_error: failure.message, error_code: failure.code }, 'failed', progress);
  }

  /** A transient failure: queued again after delayMs, or failed when no attempt is left. */
  retryOrFail(lease: Lease, maxAttempts: number, failure: Failure, delayMs: number, progress?: JobProgress): Promise<Outcome> {
    if (lease.attempts >= maxAttempts) {
      return this.fail(lease, { ...failure, message: `gave up after ${lease.attempts} attempts: ${failure.message}` }, progress);
    }
    return this.#finish(
      lease,
      { state: 'queued', run_after: dbTime(this.db.sequelize, delayMs), last_error: failure.message, error_code: failure.code },
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
      { state: 'queued', attempts: lease.attempts - 1, run_after: dbTime(this.db.sequelize, delayMs), last_error: failure.message, error_code: failure.code },
      'queued',
      progress,
    );
  }

  /** Gives the job back untouched (the runner is stopping): claimable at once, attempts kept. */
  release(lease: Lease, progress?: JobProgress): Promise<Outcome> {
    return this.#finish(lease, { state: 'queued', run_after: dbTime(this.db.sequelize) }, 'queued', progress);
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
    const running = await this.#Job.findAll({
      attributes: ['id', 'lease_owner', 'lease_expires_at', 'started_at'],
      where: { state: 'running', kind: kinds },
    });
    if (running.length === 0) return 0;
    const { now, nodes } = await readNodes(this.db);
    const liveness: NodeLiveness = { now, nodes, staleMs: nodeStaleMs };
    const deadWhy = (j: { lease_owner: string | null; started_at: Date | null }) =>
      j.lease_owner === null ? null : ownerDeadReason(j.lease_owner, j.started_at === null ? null : new Date(j.started_at), liveness);
    const stale = running.filter((j) => j.lease_owner !== self && (j.lease_expires_at === null || j.lease_expires_at <= now || deadWhy(j) !== null));
    if (stale.length === 0) return 0;
    let reclaimed = 0;
    await this.db.writes.run(async (transaction) => {
      for (const seen of stale) {
        // Re-read under the write lock: only the lease we judged may be taken back.
        const job = await this.#Job.findByPk(seen.id, { transaction });
        if (!job || job.state !== 'running' || job.lease_owner !== seen.lease_owner) continue;
        const expired = job.lease_expires_at === null || job.lease_expires_at <= now;
        const dead = deadWhy(job);
        if (!expired && dead === null) continue;
        const why = `lease of ${job.lease_owner ?? 'unknown owner'} lost (${dead ?? 'lease expired: process died or stalled'}) during attempt ${job.attempts}`;
        const values =
          job.attempts >= job.max_attempts
            ? { state: 'failed' as const, finished_at: now, last_error: `gave up after ${job.attempts} attempts: ${why}`, error_code: 'lease_lost' }
            : { state: 'queued' as const, run_after: now, last_error: why, error_code: 'lease_lost' };
        await job.update({ ...values, lease_owner: null, lease_expires_at: null }, { transaction });
        reclaimed++;
      }
    });
    return reclaimed;
  }
}
