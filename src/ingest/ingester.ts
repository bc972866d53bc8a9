/**
 * The capture ingester: the JobRunner handler of `capture` jobs, one pipeline
 *
 *   fetch   storage (through the driver) -> temp file under data_dir (capped, hashed); from the
 *           embedded store, a hard link to the held version instead (no copy), read through once
 *           while it is inspected and imported (hashed: it must be its etag, the SHA-256 the store
 *           computed, before the import may commit)
 *   inspect in the capture child's sandbox: header, read-only open, schema policy, quick_check, tables
 *   import  the same child streams the rows; rigd writes them to the capture store in one transaction
 *           (IngesterOptions.importStep: storeImport of store-import.ts)
 *   record  handed to the runner as the job's commit: the capture's results (size, sha256,
 *           tables, pages) are written in the transaction that marks the job done, under its lease
 *
 * The job is the capture's only run state: attempts, progress ({step, bytes, total, rows}), the
 * error and its stable code are the job's. Failures: a refused file (CaptureRejected, larger than
 * the cap, gone from storage, overwritten by another version) is a PermanentJobError with its
 * code; storage not answering is retried with backoff without using up an attempt, for as long as
 * the outage lasts (storage_error); anything else (a short read, the job's time bound) is retried
 * with backoff by the runner under storage_error / ingest_error / import_error, and fails once no
 * attempt is left.
 * The temp file is always removed.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { CaptureTableSummary } from '../db/capture-store/layout.ts';
import type { Database } from '../db/index.ts';
import type { Capture } from '../db/models/capture.ts';
import { NotFound, Unavailable } from '../errors.ts';
import type { ObjectStorage } from '../storage/contract.ts';
import { CaptureRejected, type CaptureInfo } from './capture-file.ts';
import { downloadTo, ObjectTooLarge, readThrough, type Downloaded } from './capture-download.ts';
import { DependencyDownError, JobError, LeaseLostError, PermanentJobError, RunnerStoppedError } from '../jobs/errors.ts';
import type { JobInfo } from '../jobs/job.ts';
import type { JobCommit, JobContext, RunnerLogger } from '../jobs/runner.ts';
import { errorText } from '../jobs/store.ts';
import type { Imported, ImportStep, ImportStepOptions } from './import-step.ts';
import { StepTimer } from './step-timer.ts';
import type { CaptureJob } from './capture-job.ts';

/** A capture job's progress (the job's progress JSON): the step, bytes read, the object's size, rows imported. */
export interface CaptureProgress {
  step: string;
  bytes: number;
  total: number | null;
  /** Rows imported so far (reads as 0 before the import step). */
  rows?: number;
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
  logger: RunnerLogger;
  /** Inspects and imports the temp copy (storeImport in rigd serve). */
  importStep: ImportStep;
}

/** A refusal the ingester recognises: a stable code; retrying cannot help. */
class Refused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Time left for the inspection: the job's bound less what is spent, less a margin for import and record. */
const RECORD_MARGIN_MS = 2000;

/** An embedded store etag (the hex SHA-256 of the content). */
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The code of the storage driver's Unavailable (DatabaseUnavailable, also an Unavailable, has its own). */
const STORAGE_UNAVAILABLE = 'storage_unavailable';

/** The code of a transient failure in each step. */
const STEP_CODES: Record<string, string> = { download: 'storage_error', import: 'import_error' };

export class Ingester {
  readonly #importStep: ImportStep;

  constructor(
    private readonly db: Database,
    private readonly storage: ObjectStorage,
    private readonly opts: IngesterOptions,
  ) {
    this.#importStep = opts.importStep;
  }

  /** The JobRunner handler: resolves with the record step, run by the runner as the job's commit. */
  readonly handle = (job: JobInfo<CaptureJob>, ctx: JobContext): Promise<JobCommit> => this.#run(job, ctx);

  async #run(job: JobInfo<CaptureJob>, ctx: JobContext): Promise<JobCommit> {
    const started = Date.now();
    const id = Number(job.payload?.captureId);
    const capture = Number.isInteger(id) ? await this.db.models.Capture.findByPk(id) : null;
    if (!capture) throw new PermanentJobError(`capture ${job.payload?.captureId} does not exist`, 'capture_missing');

    await mkdir(this.opts.tmpDir, { recursive: true, mode: 0o700 });
    await this.#removeLeftovers(capture.id);
    const file = path.join(this.opts.tmpDir, `capture-${capture.id}-${job.attempts}-${randomBytes(6).toString('hex')}.sqlite`);
    let last: CaptureProgress = { step: 'download', bytes: 0, total: capture.size === null ? null : Number(capture.size), rows: 0 };
    const timing = new StepTimer(job.createdAt, started);
    const report = (p: CaptureProgress) => {
      last = p;
      timing.step(p.step);
      ctx.progress({ ...p });
    };
    report(last);
    let verifyFailed = false;
    let overlapped: Record<string, number> | undefined;
    try {
      const held = await this.#fetch(capture, file, ctx.signal, report);
      const at = (step: string, rows = 0): CaptureProgress => ({ step, bytes: held.bytes, total: held.bytes, rows });
      report(at('inspect'));
      // A version read in place is hashed while the child inspects and imports it: the import
      // commits only once the hash is its etag (the import's signal stops it as soon as it is not).
      const notStored = new AbortController();
      held.verified.catch(() => ((verifyFailed = true), notStored.abort()));
      const { info, tables } = await this.#import(file, capture.id, started, {
        signal: AbortSignal.any([ctx.signal, notStored.signal]),
        onStep: (step) => report(at(step.startsWith('import') ? step : `inspect:${step}`)),
        onProgress: (p) => report({ ...at('import', p.rows), bytes: p.bytes || held.bytes }),
        onTimings: (t) => (overlapped = t),
        verified: held.verified,
        ...(ctx.lease ? { lease: ctx.lease } : {}),
      }).catch(async (err: unknown) => {
        await held.verified; // its failure is the reason
        throw err;
      });
      const fetched = await held.verified;
      report(at('done', tables.reduce((n, t) => n + t.rows, 0)));
      const record = this.#record(capture.id, { bytes: fetched.bytes, sha256: fetched.sha256, info, tables });
      timing.step('record');
      // Ingested: the kept version is let go once the job's "done" has committed.
      return async (transaction) => {
        await record(transaction);
        transaction.afterCommit(() => {
          this.opts.logger.info('capture imported', { capture_id: capture.id, job_id: job.id, attempt: job.attempts, bytes: fetched.bytes, rows: last.rows ?? 0, ...timing.fields(), ...(overlapped ? { overlapped_ms: overlapped } : {}) });
          void this.#release(capture);
        });
      };
    } catch (err) {
      const failure = this.#failure(err, ctx.signal, verifyFailed ? 'download' : last.step);
      // Failed for good: the version kept for this capture is let go (a retry keeps it).
      const lastAttempt = failure instanceof JobError && !(failure instanceof DependencyDownError) && job.attempts >= job.maxAttempts;
      if (failure instanceof PermanentJobError || lastAttempt) await this.#release(capture);
      throw failure;
    } finally {
      await rm(file, { force: true });
    }
  }

  /** Ends storage's hold on the capture's version (storage.hold, taken when it was queued). */
  async #release(capture: Capture): Promise<void> {
    await this.storage.release(capture.key, { etag: capture.etag, versionId: capture.version_id }).catch((err: unknown) =>
      this.opts.logger.warn('a kept capture version could not be let go', { capture_id: capture.id, error: errorText(err) }),
    );
  }

  /**
   * fetch: the notified version of the object as `file` (a copy, or the embedded store's version in
   * place); resolves with its length once `file` is complete, and `verified` with its SHA-256 once it
   * was read through and checked (a version in place with no read rate set: later, while it is imported).
   */
  async #fetch(capture: Capture, file: string, signal: AbortSignal, report: (p: CaptureProgress) => void): Promise<{ bytes: number; verified: Promise<Downloaded> }> {
    // The version queued: kept by storage since (hold), whatever was PUT to the key after it.
    const version = { etag: capture.etag, versionId: capture.version_id };
    const stat = await this.storage.stat(capture.key, version);
    if (!stat) throw new Refused('object_missing', `Object ${capture.key} is no longer in storage.`);
    if (stat.etag !== capture.etag) {
      throw new Refused('object_changed', `Object ${capture.key} was overwritten since it was queued (etag ${stat.etag}, not ${capture.etag}); the new version is a capture of its own.`);
    }
    if (stat.size > this.opts.maxBytes) {
      throw new Refused('too_large', `Capture is ${stat.size} bytes, larger than the limit of ${this.opts.maxBytes} bytes.`);
    }
    if (await this.#linkHeld(capture, file)) {
      // Paced (ingest.read_bytes_per_s): read through first, reporting its bytes, as a copy would be.
      const paced = this.opts.bytesPerSecond > 0;
      const verified = readThrough(file, {
        maxBytes: this.opts.maxBytes,
        bytesPerSecond: this.opts.bytesPerSecond,
        signal,
        ...(paced ? { onBytes: (bytes: number) => report({ step: 'download', bytes, total: stat.size, rows: 0 }) } : {}),
      }).then(
        (read) => {
          if (read.bytes !== stat.size || read.sha256 !== capture.etag) {
            throw new Error(`the kept version of ${capture.key} is not what was stored (${read.bytes} bytes, sha256 ${read.sha256}; storage said ${stat.size} bytes, ${capture.etag})`);
          }
          return read;
        },
        (err: unknown) => Promise.reject(err instanceof ObjectTooLarge ? new Refused('too_large', err.message) : err),
      );
      if (paced) await verified;
      return { bytes: stat.size, verified };
    }
    let source;
    try {
      source = await this.storage.read(capture.key, version);
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
        onBytes: (bytes) => report({ step: 'download', bytes, total: stat.size, rows: 0 }),
      });
    } catch (err) {
      if (err instanceof ObjectTooLarge) throw new Refused('too_large', err.message);
      throw err;
    }
    if (got.bytes !== stat.size) throw new Error(`read ${got.bytes} bytes of ${capture.key}, storage said ${stat.size}`);
    return { bytes: got.bytes, verified: Promise.resolve(got) };
  }

  /** The embedded store's held version as `file`, a hard link (opened read-only and immutable like a copy). False: copy it. */
  async #linkHeld(capture: Capture, file: string): Promise<boolean> {
    if (this.storage.driver !== 'embedded' || !this.storage.linkHeld || !SHA256_HEX.test(capture.etag)) return false;
    return this.storage.linkHeld(capture.key, { etag: capture.etag, versionId: capture.version_id }, file);
  }

  /** inspect and import: the one call site of the import step (CaptureRejected: refused for good). */
  async #import(file: string, captureId: number, started: number, opts: Omit<ImportStepOptions, 'timeoutMs'>): Promise<Imported> {
    try {
      const timeoutMs = Math.max(1000, this.opts.jobTimeoutMs - (Date.now() - started) - RECORD_MARGIN_MS);
      return await this.#importStep(file, captureId, { ...opts, timeoutMs });
    } catch (err) {
      if (err instanceof CaptureRejected) throw new Refused(err.reason, err.message);
      throw err;
    }
  }

  /** record: the capture's results, written by the runner in the transaction that marks the job done. */
  #record(captureId: number, done: { bytes: number; sha256: string; info: CaptureInfo; tables: CaptureTableSummary[] }): JobCommit {
    const { Capture } = this.db.models;
    return async (transaction) => {
      await Capture.update(
        { size: done.bytes, sha256: done.sha256, tables: JSON.stringify(done.tables), page_size: done.info.pageSize, page_count: done.info.pageCount },
        { where: { id: captureId }, transaction },
      );
    };
  }

  /** What the runner is told: refusals are permanent with their code; the rest transient, coded by step. */
  #failure(err: unknown, signal: AbortSignal, step: string): unknown {
    const reason: unknown = signal.aborted ? signal.reason : undefined;
    if (err instanceof LeaseLostError || reason instanceof LeaseLostError || reason instanceof RunnerStoppedError) return reason ?? err;
    if (err instanceof Refused) return new PermanentJobError(err.message, err.code);
    if (err instanceof JobError) return err;
    // This node's own disk (data_dir/ingest-tmp read-only or full): nothing is wrong with the capture,
    // so no attempt is used up; another node, or this one once its disk is back, imports it.
    if (reason === undefined && isLocalDiskFault(err)) {
      return new DependencyDownError(`this node's disk cannot hold the capture's temp copy (${errorText(err)})`, 'local_disk');
    }
    // MinIO does not answer: nothing is wrong with the capture; it waits, queued, for storage to be back.
    // (The embedded store's Unavailable is this host's own disk: counted like any transient failure.)
    if (err instanceof Unavailable && err.code === STORAGE_UNAVAILABLE && reason === undefined && this.storage.driver === 'minio') {
      return new DependencyDownError(err.message, 'storage_error');
    }
    return new JobError(errorText(reason ?? err), STEP_CODES[step] ?? 'ingest_error');
  }

  /** Temp files of earlier attempts of this capture (a process that died mid-run leaves one). */
  async #removeLeftovers(captureId: number): Promise<void> {
    const prefix = `capture-${captureId}-`;
    for (const name of await readdir(this.opts.tmpDir)) {
      if (name.startsWith(prefix)) await rm(path.join(this.opts.tmpDir, name), { force: true });
    }
  }
}

/** Errors of a disk that is read-only, full or over quota (its own code, or its cause's). */
const DISK_FAULTS = new Set(['EROFS', 'ENOSPC', 'EDQUOT']);
function isLocalDiskFault(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (DISK_FAULTS.has(String((e as NodeJS.ErrnoException).code))) return true;
  }
  return false;
}
