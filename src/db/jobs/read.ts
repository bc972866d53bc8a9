import { Op, type WhereOptions } from 'sequelize';
import type { Database } from '../index.ts';
import { JOB_STATES, type Job, type JobState } from '../models/job.ts';

/** Reads of the job table for the CLI and the HTTP API (no write transaction). */

export function jobById(db: Database, id: number): Promise<Job | null> {
  return db.models.Job.findByPk(id);
}

export interface JobFilter {
  state?: JobState | JobState[];
  kind?: string;
  /** Only jobs with an id below this one (pages newest first). */
  beforeId?: number;
  limit: number;
}

/** Jobs, newest first. */
export function jobsNewestFirst(db: Database, filter: JobFilter): Promise<Job[]> {
  const where: WhereOptions<Job> = {};
  if (filter.state !== undefined) Object.assign(where, { state: filter.state });
  if (filter.kind !== undefined) Object.assign(where, { kind: filter.kind });
  if (filter.beforeId !== undefined) Object.assign(where, { id: { [Op.lt]: filter.beforeId } });
  return db.models.Job.findAll({ where, order: [['id', 'DESC']], limit: filter.limit });
}

/** How many jobs are in each state (optionally of one kind); every state present. */
export async function jobsByState(db: Database, kind?: string): Promise<Record<JobState, number>> {
  const rows = (await db.models.Job.findAll({
    attributes: ['state', [db.sequelize.fn('COUNT', db.sequelize.col('id')), 'n']],
    where: kind === undefined ? {} : { kind },
    group: ['state'],
    raw: true,
  })) as unknown as { state: JobState; n: number | string }[];
  const depth = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
  for (const row of rows) if (row.state in depth) depth[row.state] = Number(row.n);
  return depth;
}
