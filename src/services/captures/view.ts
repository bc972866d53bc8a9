/**
 * A capture as the CLI and the API show it: its identity and results from the capture row, its run
 * state derived from its job (the only place run state lives).
 */
import type { CaptureTableSummary } from '../../db/capture-store/layout.ts';
import { captureState, type Capture, type CaptureState } from '../../db/models/capture.ts';
import type { Job } from '../../db/models/job.ts';
import type { CaptureProgress } from '../../ingest/ingester.ts';
import { parseJson } from '../../jobs/job.ts';

export interface CaptureView {
  id: number;
  bucket: string;
  key: string;
  url: string;
  etag: string;
  size: number | null;
  rig_id: string | null;
  project: string | null;
  upload_id: number | null;
  job_id: number | null;
  state: CaptureState;
  attempts: number;
  error_code: string | null;
  last_error: string | null;
  progress: CaptureProgress | null;
  sha256: string | null;
  tables: CaptureTableSummary[] | null;
  page_size: number | null;
  page_count: number | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

function progressOf(text: string | null | undefined): CaptureProgress | null {
  const p = parseJson(text ?? null) as Partial<CaptureProgress> | null;
  if (!p || typeof p !== 'object' || typeof p.step !== 'string') return null;
  return { step: p.step, bytes: Number(p.bytes ?? 0), total: p.total === undefined || p.total === null ? null : Number(p.total), rows: Number(p.rows ?? 0) };
}

/** `job`: the capture's job (capture.job_id), null when it has none. */
export function captureView(c: Capture, job: Job | null, url: string): CaptureView {
  const updated = job && job.updated_at > c.updated_at ? job.updated_at : c.updated_at;
  const state = captureState(job?.state);
  // The job keeps the error of an earlier attempt after a retry succeeds; an ingested capture shows none.
  const failure = state === 'ingested' ? null : job;
  return {
    id: c.id,
    bucket: c.bucket,
    key: c.key,
    url,
    etag: c.etag,
    size: c.size === null ? null : Number(c.size),
    rig_id: c.rig_id,
    project: c.project,
    upload_id: c.upload_id,
    job_id: c.job_id ?? null,
    state,
    attempts: job?.attempts ?? 0,
    /** Why it failed, or why the last attempt failed while it is retried (stable snake_case). */
    error_code: failure?.error_code ?? null,
    last_error: failure?.last_error ?? null,
    progress: progressOf(job?.progress),
    sha256: c.sha256 ?? null,
    tables: parseJson(c.tables ?? null) as CaptureTableSummary[] | null,
    page_size: c.page_size ?? null,
    page_count: c.page_count ?? null,
    created_at: c.created_at.toISOString(),
    updated_at: updated.toISOString(),
    started_at: iso(job?.started_at),
    finished_at: iso(job?.finished_at),
  };
}
