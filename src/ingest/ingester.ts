/**
 * The capture ingester: the JobRunner handler of `capture` jobs.
 *
 *   storage (through the driver) -> temp file under data_dir (capped, hashed) -> inspectCapture
 *   (header, sandboxed read-only open, quick_check, tables) -> the capture row.
 *
 * Failures: a refused file (CaptureRejected, larger than the cap, gone from storage, overwritten by
 * another version) fails the capture for good; anything else (storage down, a short read, the job's
 * time bound) is retried with backoff by the runner, and fails the capture once no attempt is left.
 * Idempotent: the capture row exists before the job (same transaction), every run updates that row,
 * and a run finding it ingested does nothing. The temp file is always removed.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Database } from '../db/index.ts';
import type { Capture } from '../db/models/capture.ts';
import { NotFound } from '../errors.ts';
import type { ObjectStorage } from '../storage/contract.ts';
import { CaptureRejected, inspectCapture, type CaptureInfo } from './capture-file.ts';
import { downloadTo, ObjectTooLarge } from './capture-download.ts';
import { CaptureRecord, type CaptureProgress, type Fence } from './capture-record.ts';
import { LeaseLostError, PermanentJobError, RunnerStoppedError } from '../jobs/errors.ts';
import type { JobInfo } from '../jobs/job.ts';
import type { JobContext, RunnerLogger } from '../jobs/runner.ts';
import { ProgressThrottle } from '../jobs/progress.ts';
import { errorText } from '../jobs/store.ts';

export const CAPTURE_JOB = 'capture';

export interface CaptureJob {
  captureId: number;
}

export interface IngesterOptions {
  /** Largest capture read (storage.max_upload_size). */
  maxBytes: number;
  /** The job's time bound (ingest.job_timeout_ms); the inspection must end before it. */
  jobTimeoutMs: number;
  /** ingest.read_bytes_per_s; 0 = no limit. */
  bytesPerSecond: number;
  /** Where captures are copied while they are checked (under data_dir). */
  tmpDir: string;
  /** At most one progress write per interval, ms. @default 500 */
  progressIntervalMs?: number;
  logger: RunnerLogger;
}

/** A failure the ingester recognises: a stable code, and whether retrying can help. */
class Refused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Time left for the inspection: the job's bound less what is spent, less a margin to record the outcome. */
const RECORD_MARGIN_MS = 2000;

export class Ingester {
  readonly #record: CaptureRecord;

  constructor(
    private readonly db: Database,
    private readonly storage: ObjectStorage,
    private readonly opts: IngesterOptions,
  ) {
    this.#record = new CaptureRecord(db);
  }

  /** The JobRunner handler. */
  readonly handle = (job: JobInfo<CaptureJob>, ctx: JobContext): Promise<void> => this.#run(job, ctx);

  async #run(job: JobInfo<CaptureJob>, ctx: JobContext): Promise<void> {
    const started = Date.now();
    const id = Number(job.payload?.captureId);
    const capture = Number.isInteger(id) ? await this.db.models.Capture.findByPk(id) : null;
    if (!capture) throw new PermanentJobError(`capture ${job.payload?.captureId} does not exist`);
    if (capture.state === 'ingested') return; // a re-run after the capture was recorded
    const fence: Fence = { jobId: job.id, owner: job.leaseOwner, attempts: job.attempts };
    if (!(await this.#record.begin(fence, capture.id))) throw new LeaseLostError();

    await mkdir(this.opts.tmpDir, { recursive: true, mode: 0o700 });
    await this.#removeLeftovers(capture.id);
    const file = path.join(this.opts.tmpDir, `capture-${capture.id}-${job.attempts}-${randomBytes(6).toString('hex')}.sqlite`);
    let last: CaptureProgress = { step: 'download', bytes: 0, total: capture.size === null ? null : Number(capture.size) };
    const progress = new ProgressThrottle(
      (p) => this.#record.progress(fence, capture.id, p as CaptureProgress),
      this.opts.progressIntervalMs ?? 500,
      (err) => this.opts.logger.warn('saving capture progress failed', { capture_id: capture.id, error: errorText(err) }),
    );
    const report = (p: CaptureProgress) => {
      last = p;
      progress.report({ ...p });
    };
    try {
      const fetched = await this.#fetch(capture, file, ctx.signal, report);
      report({ step: 'inspect', bytes: fetched.bytes, total: fetched.bytes });
      let info: CaptureInfo;
      try {
        info = await inspectCapture(file, {
          maxBytes: this.opts.maxBytes,
          timeoutMs: Math.max(1000, this.opts.jobTimeoutMs - (Date.now() - started) - RECORD_MARGIN_MS),
          signal: ctx.signal,
          onStep: (step) => report({ step: `inspect:${step}`, bytes: fetched.bytes, total: fetched.bytes }),
        });
      } catch (err) {
        if (err instanceof CaptureRejected) throw new Refused(err.reason, err.message);
        throw err;
      }
      await progress.stop();
      if (!(await this.#record.succeed(fence, capture.id, { bytes: fetched.bytes, sha256: fetched.sha256, info }))) {
        throw new LeaseLostError();
      }
    } catch (err) {
      await progress.stop();
      await this.#recordFailure(job, fence, capture, err, ctx.signal, last);
    } finally {
      await rm(file, { force: true });
    }
  }

  /** Copies the notified version of the object to `file`; returns its length and SHA-256. */
  async #fetch(capture: Capture, file: string, signal: AbortSignal, report: (p: CaptureProgress) => void) {
    const stat = await this.storage.stat(capture.key);
    if (!stat) throw new Refused('object_missing', `Object ${capture.key} is no longer in storage.`);
    if (stat.etag !== capture.etag) {
      throw new Refused('object_changed', `Object ${capture.key} was overwritten since it was queued (etag ${stat.etag}, not ${capture.etag}); the new version is a capture of its own.`);
    }
    if (stat.size > this.opts.maxBytes) {
      throw new Refused('too_large', `Capture is ${stat.size} bytes, larger than the limit of ${this.opts.maxBytes} bytes.`);
    }
    let source;
    try {
      source = await this.storage.read(capture.key);
    } catch (err) {
      if (err instanceof NotFound) throw new Refused('object_missing', `Object ${capture.key} is no longer in storage.`);
      throw err;
    }
    let got;
    try {
      got = await downloadTo(source, file, {
        maxBytes: this.opts.maxBytes,
        bytesPerSecond: this.opts.bytesPerSecond,
        signal,
        onBytes: (bytes) => report({ step: 'download', bytes, total: stat.size }),
      });
    } catch (err) {
      if (err instanceof ObjectTooLarge) throw new Refused('too_large', err.message);
      throw err;
    }
    if (got.bytes !== stat.size) throw new Error(`read ${got.bytes} bytes of ${capture.key}, storage said ${stat.size}`);
    return got;
  }

  async #recordFailure(job: JobInfo, fence: Fence, capture: Capture, err: unknown, signal: AbortSignal, last: CaptureProgress): Promise<never> {
    const reason: unknown = signal.aborted ? signal.reason : undefined;
    if (err instanceof LeaseLostError || reason instanceof LeaseLostError) throw err;
    if (reason instanceof RunnerStoppedError) {
      await this.#record.release(fence, capture.id);
      throw reason;
    }
    if (err instanceof Refused) {
      await this.#record.failure(fence, capture.id, err.code, err.message, true, last);
      throw new PermanentJobError(`${err.code}: ${err.message}`);
    }
    const cause = reason ?? err;
    const final = job.attempts >= job.maxAttempts;
    const code = last.step === 'download' ? 'storage_error' : 'ingest_error';
    const message = final ? `gave up after ${job.attempts} attempts: ${errorText(cause)}` : errorText(cause);
    await this.#record.failure(fence, capture.id, code, message, final, last);
    throw cause;
  }

  /** Temp files of earlier attempts of this capture (a process that died mid-run leaves one). */
  async #removeLeftovers(captureId: number): Promise<void> {
    const prefix = `capture-${captureId}-`;
    for (const name of await readdir(this.opts.tmpDir)) {
      if (name.startsWith(prefix)) await rm(path.join(this.opts.tmpDir, name), { force: true });
    }
  }
}
