/**
 * One capture in full (`rigd captures show ID`): its ingestion (state, rig, project, attempts, the
 * last error, progress) and, once ingested, each table with its rows, columns and time span.
 * Built from CaptureService.get, so the state is whatever the service says it is.
 */
import type { CaptureTableSummary } from '../../db/capture-store/layout.ts';
import type { CaptureProgress } from '../../ingest/ingester.ts';
import type { CaptureService, CaptureView } from './service.ts';
import { tableSummaries } from './tables.ts';

export interface CaptureDetail {
  id: number;
  state: CaptureView['state'];
  rig_id: string | null;
  project: string | null;
  key: string;
  url: string;
  size: number | null;
  sha256: string | null;
  attempts: number;
  error_code: string | null;
  last_error: string | null;
  progress: CaptureProgress | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Empty until the capture is ingested. */
  tables: CaptureTableSummary[];
}

export function captureDetail(c: CaptureView): CaptureDetail {
  return {
    id: c.id,
    state: c.state,
    rig_id: c.rig_id,
    project: c.project,
    key: c.key,
    url: c.url,
    size: c.size,
    sha256: c.sha256,
    attempts: c.attempts,
    error_code: c.error_code,
    last_error: c.last_error,
    progress: c.progress,
    created_at: c.created_at,
    updated_at: c.updated_at,
    started_at: c.started_at,
    finished_at: c.finished_at,
    tables: tableSummaries(c),
  };
}

export async function showCapture(captures: CaptureService, id: number): Promise<CaptureDetail> {
  return captureDetail(await captures.get(id));
}
