/**
 * The ingester's writes to a capture row. Each one goes through the write path and is fenced by
 * the job's lease (the job row must still be running under this claim), so a run whose lease was
 * taken over, or whose process was presumed dead, can no longer change the capture.
 */
import type { Database } from '../db/index.ts';
import type { CaptureState } from '../db/models/capture.ts';
import type { CaptureInfo } from './capture-file.ts';

/** One claim of the capture's job: the token every write of that run must match. */
export interface Fence {
  jobId: number;
  owner: string | null;
  attempts: number;
}

export type CaptureProgress = {
  step: string;
  bytes: number;
  total: number | null;
};

export interface Ingested {
  bytes: number;
  sha256: string;
  info: CaptureInfo;
}

export class CaptureRecord {
  constructor(private readonly db: Database) {}

  async #fenced(fence: Fence, captureId: number, values: Record<string, unknown>): Promise<boolean> {
    const { Job, Capture } = this.db.models;
    return this.db.writes.run(async (transaction) => {
      const ours = await Job.count({
        where: { id: fence.jobId, state: 'running', lease_owner: fence.owner, attempts: fence.attempts },
        transaction,
      });
      if (ours === 0) return false;
      await Capture.update(values, { where: { id: captureId }, transaction });
      return true;
    });
  }

  /** ingesting, attempt `fence.attempts`. False when the lease is no longer ours. */
  begin(fence: Fence, captureId: number): Promise<boolean> {
    return this.#fenced(fence, captureId, {
      state: 'ingesting' satisfies CaptureState,
      attempts: fence.attempts,
      started_at: new Date(),
      finished_at: null,
      progress: JSON.stringify({ step: 'download', bytes: 0, total: null } satisfies CaptureProgress),
    });
  }

  progress(fence: Fence, captureId: number, progress: CaptureProgress): Promise<boolean> {
    return this.#fenced(fence, captureId, { progress: JSON.stringify(progress) });
  }

  succeed(fence: Fence, captureId: number, done: Ingested): Promise<boolean> {
    const { info } = done;
    return this.#fenced(fence, captureId, {
      state: 'ingested' satisfies CaptureState,
      size: done.bytes,
      sha256: done.sha256,
      tables: JSON.stringify(info.tables),
      page_size: info.pageSize,
      page_count: info.pageCount,
      error_code: null,
      last_error: null,
      progress: JSON.stringify({ step: 'done', bytes: done.bytes, total: done.bytes } satisfies CaptureProgress),
      finished_at: new Date(),
    });
  }

  /** Failed for good (`final`), or back to queued to be retried after a transient failure. */
  failure(fence: Fence, captureId: number, code: string, message: string, final: boolean, progress?: CaptureProgress): Promise<boolean> {
    return this.#fenced(fence, captureId, {
      state: (final ? 'failed' : 'queued') satisfies CaptureState,
      error_code: code,
      last_error: message,
      ...(final ? { finished_at: new Date() } : {}),
      ...(progress ? { progress: JSON.stringify(progress) } : {}),
    });
  }

  /** The runner is stopping: back to queued, untouched otherwise (the job is released, not failed). */
  release(fence: Fence, captureId: number): Promise<boolean> {
    return this.#fenced(fence, captureId, { state: 'queued' satisfies CaptureState });
  }
}
