import { Job, type JobState } from '../db/models/job.ts';

export { JOB_STATES, type JobState } from '../db/models/job.ts';

/** Job progress as the handler reports it; any JSON object, by convention {step, bytes, ...}. */
export type JobProgress = { step?: string; bytes?: number } & Record<string, unknown>;

/** A job as plain data: what handlers, the CLI and the HTTP API see. */
export interface JobInfo<P = unknown> {
  id: number;
  kind: string;
  payload: P;
  state: JobState;
  attempts: number;
  maxAttempts: number;
  runAfter: Date;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  lastError: string | null;
  /** Stable code of the last failure, when the handler gave one. */
  errorCode: string | null;
  progress: JobProgress | null;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function toJobInfo<P = unknown>(row: Job): JobInfo<P> {
  return {
    id: row.id,
    kind: row.kind,
    payload: parseJson(row.payload) as P,
    state: row.state,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    runAfter: row.run_after,
    leaseOwner: row.lease_owner ?? null,
    leaseExpiresAt: row.lease_expires_at ?? null,
    lastError: row.last_error ?? null,
    errorCode: row.error_code ?? null,
    progress: parseJson(row.progress ?? null) as JobProgress | null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at ?? null,
    finishedAt: row.finished_at ?? null,
  };
}
