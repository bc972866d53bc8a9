/** Plain data (no Sequelize): readers that run without the ORM (the CLI's SQL views) use it too. */
import type { JobState } from './job.ts';

/**
 * A capture's ingestion state, derived when read from the job that ingests it (the job row is the
 * only place run state lives): no job -> uploaded; queued -> queued; running -> ingesting;
 * done -> ingested; failed -> failed.
 */
export const CAPTURE_STATES = ['uploaded', 'queued', 'ingesting', 'ingested', 'failed'] as const;
export type CaptureState = (typeof CAPTURE_STATES)[number];

const BY_JOB_STATE: Record<JobState, CaptureState> = { queued: 'queued', running: 'ingesting', done: 'ingested', failed: 'failed' };

export function captureState(jobState: JobState | null | undefined): CaptureState {
  return jobState ? BY_JOB_STATE[jobState] : 'uploaded';
}

/** The job state a capture state reads from (null: no job). */
export function jobStateOf(state: CaptureState): JobState | null {
  const found = (Object.entries(BY_JOB_STATE) as [JobState, CaptureState][]).find(([, s]) => s === state);
  return found ? found[0] : null;
}

/** captureState in SQL, for readers that join captures to jobs (`LEFT JOIN jobs <alias> ON <alias>.id = captures.job_id`). */
export function captureStateSql(jobAlias = 'j'): string {
  return `CASE ${jobAlias}.state WHEN 'queued' THEN 'queued' WHEN 'running' THEN 'ingesting' WHEN 'done' THEN 'ingested' WHEN 'failed' THEN 'failed' ELSE 'uploaded' END`;
}
