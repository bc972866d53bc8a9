import { Op, type WhereOptions } from 'sequelize';
import type { Database } from '../db/index.ts';
import { JOB_STATES, type Job, type JobState } from '../db/models/job.ts';
import { toJobInfo, type JobInfo } from './job.ts';

/** Read-only views of the job table for the CLI and the HTTP API (no write transaction). */

export async function getJob<P = unknown>(db: Database, id: number): Promise<JobInfo<P> | null> {
  const row = await db.models.Job.findByPk(id);
  return row ? toJobInfo<P>(row) : null;
}

export interface ListJobsOptions {
  state?: JobState | JobState[];
  kind?: string;
  /** @default 100 */
  limit?: number;
  /** Only jobs with an id below this one (pages newest first). */
  beforeId?: number;
}

/** Jobs, newest first. */
export async function listJobs(db: Database, opts: ListJobsOptions = {}): Promise<JobInfo[]> {
  const where: WhereOptions<Job> = {};
  if (opts.state !== undefined) Object.assign(where, { state: opts.state });
  if (opts.kind !== undefined) Object.assign(where, { kind: opts.kind });
  if (opts.beforeId !== undefined) Object.assign(where, { id: { [Op.lt]: opts.beforeId } });
  const rows = await db.models.Job.findAll({ where, order: [['id', 'DESC']], limit: Math.min(opts.limit ?? 100, 1000) });
  return rows.map((row) => toJobInfo(row));
}

export type QueueDepth = Record<JobState, number>;

/** How many jobs are in each state (optionally of one kind). */
export async function queueDepth(db: Database, kind?: string): Promise<QueueDepth> {
  const rows = (await db.models.Job.findAll({
    attributes: ['state', [db.sequelize.fn('COUNT', db.sequelize.col('id')), 'n']],
    where: kind === undefined ? {} : { kind },
    group: ['state'],
    raw: true,
  })) as unknown as { state: JobState; n: number | string }[];
  const depth = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as QueueDepth;
  for (const row of rows) if (row.state in depth) depth[row.state] = Number(row.n);
  return depth;
}
