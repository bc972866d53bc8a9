// The contract between the ingester and the step that inspects and imports a capture (storeImport
// in rigd serve, a stand-in in tests): what it is given, what it reports, what it returns.
import type { CaptureTableSummary } from '../db/capture-store/layout.ts';
import type { Lease } from '../jobs/store.ts';
import type { CaptureInfo } from './capture-file.ts';

/** What the import step reports while it runs. */
export interface ImportProgress {
  rows: number;
  bytes: number;
}

export interface ImportStepOptions {
  /** Aborts on the job's time bound, shutdown or a lost lease: stop and throw. */
  signal: AbortSignal;
  /** Time left for the inspection and import, ms. */
  timeoutMs: number;
  /** The inspection's steps ('header', 'opened', 'quick_check', ...), then 'import'. */
  onStep(step: string): void;
  onProgress(progress: ImportProgress): void;
  /** The job's claim: the import commits only while it still holds it. */
  lease?: Lease;
  /** When the overlapped parts of an import in the engine ended, ms from the copy's start (for the log line). */
  onTimings?(timings: Record<string, number>): void;
  /** Settles once the file is known to be the stored version: the import commits only after it resolves. */
  verified?: Promise<unknown>;
}

/** What the inspection found and what the import wrote. */
export interface Imported {
  info: CaptureInfo;
  tables: CaptureTableSummary[];
}

/**
 * The pipeline's inspect and import, in the capture child's sandbox: the checked temp copy `file`
 * is inspected, then its rows are written to the capture store tagged with `captureId`; resolves
 * with what the capture records. Must be idempotent (a job that died mid-import runs again). Throw
 * CaptureRejected to fail the capture for good; anything else is retried.
 */
export type ImportStep = (file: string, captureId: number, opts: ImportStepOptions) => Promise<Imported>;
