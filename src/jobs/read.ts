import type { Database } from '../db/index.ts';
import { jobById, jobsByState, jobsNewestFirst } from '../db/jobs/read.ts';
import type { JobState } from '../db/models/job.ts';
import { toJobInfo, type JobInfo } from './job.ts';

/** Read-only views of the job table for the CLI and the HTTP API (no write transaction). */

export async function getJob<P = unknown>(db: Database, id: number): Promise<JobInfo<P> | null> {
  const row = await jobById(db, id);
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
  const rows = await jobsNewestFirst(db, { ...opts, limit: Math.min(opts.limit ?? 100, 1000) });
  return rows.map((row) => toJobInfo(row));
}

export type QueueDepth = Record<JobState, number>;

/** How many jobs are in each state (optionally of one kind). */
export function queueDepth(db: Database, kind?: string): Promise<QueueDepth> {
  return jobsByState(db, kind);
}
