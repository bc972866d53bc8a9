import { Op, QueryTypes, type Transaction } from 'sequelize';
import { dbTime } from '../clock.ts';
import type { Database } from '../index.ts';
import type { Job } from '../models/job.ts';

/**
 * Claiming the next job: every statement of the claim, on both engines. A claim is one UPDATE of
 * the next due queued job to running, with a lease (owner, expiry) and one more attempt.
 */

/** One claim of one job: the fencing token every later write of that run must match. */
export interface Lease {
  id: number;
  owner: string;
  /** The job's attempts right after this claim: a later claim of the same job has a larger one. */
  attempts: number;
}

/**
 * Claim order, round robin between fairness groups (jobs.fair_group): the group with the fewest
 * running jobs, then the one whose last job started longest ago (never: first), then the oldest due
 * job. A job of no group ranks as a group never served (ahead of every group served before).
 */
const FAIR_ORDER = `(SELECT COUNT(*) FROM jobs r WHERE r.state = 'running' AND r.fair_group = q.fair_group),
               (SELECT MAX(r.started_at) FROM jobs r WHERE r.fair_group = q.fair_group) NULLS FIRST,
               q.run_after, q.id`;

/**
 * With row locks (PostgreSQL): FOR UPDATE SKIP LOCKED, so concurrent claimers skip the row another
 * one has locked instead of waiting for it and updating nothing; lease and due times are the
 * server's clock.
 */
const LOCKING_CLAIM = `UPDATE jobs
    SET state = 'running', attempts = attempts + 1, lease_owner = :owner,
        lease_expires_at = now() + make_interval(secs => :leaseS), updated_at = now(), started_at = now(), finished_at = NULL
  WHERE id = (SELECT q.id FROM jobs q
               WHERE q.state = 'queued' AND q.run_after <= now() AND q.kind IN (:kinds)
               ORDER BY ${FAIR_ORDER} LIMIT 1
               FOR UPDATE OF q SKIP LOCKED)
    AND state = 'queued'
  RETURNING id`;

/** One writer at a time (SQLite): the write transaction is already exclusive; times are the app's. */
const SINGLE_WRITER_CLAIM = `UPDATE jobs
    SET state = 'running', attempts = attempts + 1, lease_owner = :owner,
        lease_expires_at = :expires, updated_at = :now, started_at = :now, finished_at = NULL
  WHERE id = (SELECT q.id FROM jobs q
               WHERE q.state = 'queued' AND q.run_after <= :now AND q.kind IN (:kinds)
               ORDER BY ${FAIR_ORDER} LIMIT 1)
    AND state = 'queued'
  RETURNING id`;

/** Cheap read before taking the write lock: is a job of these kinds due? */
export async function hasClaimableJob(db: Database, kinds: string[]): Promise<boolean> {
  if (kinds.length === 0) return false;
  const row = await db.models.Job.findOne({
    attributes: ['id'],
    where: { state: 'queued', run_after: { [Op.lte]: dbTime(db.sequelize) }, kind: kinds },
  });
  return row !== null;
}

/**
 * Claims the next due job of these kinds (round robin between fairness groups, FAIR_ORDER) with one
 * UPDATE in the caller's write transaction; the job as claimed, or null. The outer
 * `state = 'queued'` makes it a compare-and-set on any database. RETURNING: SQLite >= 3.35, PostgreSQL.
 */
export async function claimJob(db: Database, transaction: Transaction, kinds: string[], owner: string, leaseMs: number): Promise<Job | null> {
  if (kinds.length === 0) return null;
  const now = new Date();
  const rows = db.dialect.rowLocks
    ? await db.sequelize.query<{ id: number }>(LOCKING_CLAIM, { replacements: { owner, leaseS: leaseMs / 1000, kinds }, type: QueryTypes.SELECT, transaction })
    : await db.sequelize.query<{ id: number }>(SINGLE_WRITER_CLAIM, {
        replacements: { owner, now, expires: new Date(now.getTime() + leaseMs), kinds },
        type: QueryTypes.SELECT,
        transaction,
      });
  if (rows.length === 0) return null;
  return db.models.Job.findByPk(rows[0]!.id, { transaction });
}

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
