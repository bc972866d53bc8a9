/**
 * Captures: one per stored object version (bucket, key, etag), made when a completed upload is handed
 * over or a notice names the object, and queued for ingestion by enqueueing its job. The capture
 * row and its job commit in one write transaction; the capture's run state is its job's.
 */
import type { Config } from '../../config/schema.ts';
import { captureOnce } from '../../db/capture-rows.ts';
import { captureJob, capturesWithJobs, captureWithJob, jobById, setCaptureJob } from '../../db/captures.ts';
import type { Database, Transaction } from '../../db/index.ts';
import { CAPTURE_STATES, captureState, jobStateOf, type Capture, type CaptureState } from '../../db/models/capture.ts';
import type { Job } from '../../db/models/job.ts';
import type { Upload } from '../../db/models/upload.ts';
import { currentProjectOf } from '../../db/rigs.ts';
import { uploadOfVersion } from '../../db/uploads.ts';
import { InvalidInput, NotFound } from '../../errors.ts';
import { CAPTURE_JOB, type CaptureJob } from '../../ingest/capture-job.ts';
import { enqueue } from '../../jobs/enqueue.ts';
import type { Logger } from '../../log.ts';
import type { ObjectStorage } from '../../storage/contract.ts';
import { keyProblem } from '../../storage/contract.ts';
import { isCaptureKey, normaliseEtag, type NoticedObject } from './notice.ts';
import { captureView, type CaptureView } from './view.ts';

export type { CaptureView } from './view.ts';

/** States in which the capture is, or will be, ingested without anyone asking again. */
const ON_ITS_WAY: readonly CaptureState[] = ['queued', 'ingesting', 'ingested'];

export interface Queued {
  capture: CaptureView;
  /** Queued, being ingested, or ingested (false: uploaded only, or failed). */
  queued: boolean;
  /** This call enqueued its job. */
  enqueued: boolean;
  /** This call made the capture (false: it already existed). */
  created: boolean;
}

export interface QueueOptions {
  /** Queue a failed capture again (an operator's explicit `rigd ingest`); notices never do. @default false */
  retryFailed?: boolean;
  /**
   * Also import an ingested capture again (`rigd ingest KEY --force`): a new job replaces its rows in
   * the capture store in one transaction. A queued or ingesting capture is left as it is. @default false
   */
  force?: boolean;
}

export interface ListOptions {
  rig?: string;
  project?: string;
  state?: string;
  /** @default 50, at most 500 */
  limit?: number;
  /** Only captures with a smaller id (the next page, newest first). */
  before?: number;
}

export interface CapturePage {
  captures: CaptureView[];
  /** Pass as `before` for the next page; null on the last one. */
  next_before: number | null;
}

interface Origin {
  rigId: string | null;
  project: string | null;
  uploadId: number | null;
}

interface Version {
  key: string;
  etag: string;
  size: number | null;
  /** Storage's id of the version held for the job (MinIO, versioned bucket). */
  versionId?: string | null;
}

/**
 * What to do with the capture found or made: nothing more, queue it if it has no job, also queue it
 * again if it failed, or also if it is ingested (import it again).
 */
type Want = 'find' | 'queue' | 'queue_or_retry' | 'reimport';

/** The states from which `want` queues a new job. */
const QUEUES_FROM: Record<Want, readonly CaptureState[]> = {
  find: [],
  queue: ['uploaded'],
  queue_or_retry: ['uploaded', 'failed'],
  reimport: ['uploaded', 'failed', 'ingested'],
};

export class CaptureService {
  constructor(
    private readonly db: Database,
    private readonly storage: ObjectStorage,
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
  ) {}

  /**
   * The hand-over from uploads: a completed upload of a capture file makes (or finds) the capture of
   * that object version, queued when ingest.auto_enqueue is on, else left `uploaded`.
   */
  async uploaded(upload: Upload): Promise<Queued | null> {
    if (!isCaptureKey(upload.key) || !upload.etag) return null;
    let project = upload.project;
    if (!project && upload.rig_id) project = await currentProjectOf(this.db, upload.rig_id);
    const origin: Origin = { rigId: upload.rig_id, project, uploadId: upload.id };
    const version: Version = { key: upload.key, etag: normaliseEtag(upload.etag), size: Number(upload.bytes_seen) };
    const q = await this.#settle(version, origin, this.config.ingest.auto_enqueue ? 'queue' : 'find');
    this.log.info(q.enqueued ? 'capture queued on upload' : q.created ? 'capture recorded on upload' : 'capture already known', {
      capture_id: q.capture.id,
      key: upload.key,
      state: q.capture.state,
    });
    return q;
  }

  /** `rigd ingest URL|KEY`: an object URL of our storage, or a key in the configured bucket. */
  async queueTarget(target: string, opts: QueueOptions = {}): Promise<Queued> {
    let key = target;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) key = this.storage.parseObjectUrl(target).key;
    const problem = keyProblem(key);
    if (problem !== null) throw new InvalidInput(problem, [{ field: 'key', message: problem }]);
    return this.queueObject({ key, url: this.storage.objectUrl(key) }, opts);
  }

  /**
   * Queues one version of one object, once: a capture without a job gets one; a queued, ingesting or
   * ingested one is left as it is; a failed one only with retryFailed. Storage is asked for the etag
   * when the notice had none (absent: NotFound object_not_found).
   */
  async queueObject(object: NoticedObject, opts: QueueOptions = {}): Promise<Queued> {
    let { etag, size } = object;
    if (etag === undefined) {
      const info = await this.storage.stat(object.key);
      if (!info) throw new NotFound(`object ${object.key}`, 'object_not_found');
      etag = normaliseEtag(info.etag);
      size = info.size;
    }
    const origin = await this.#origin(object.key, etag);
    const want: Want = opts.force ? 'reimport' : opts.retryFailed ? 'queue_or_retry' : 'queue';
    return this.#settle({ key: object.key, etag, size: size ?? null, ...(object.versionId ? { versionId: object.versionId } : {}) }, origin, want);
  }

  /**
   * Inserts or finds the capture of one object version and enqueues its job as `want` says, in one
   * write transaction. Inserts of one version at once (duplicate notices on several nodes) end on the
   * same row, without an error: the insert does nothing when the version exists, and the row is
   * read locked, so only one of them sees it without a job and enqueues (src/db/capture-rows.ts).
   */
  async #settle(version: Version, origin: Origin, want: Want): Promise<Queued> {
    // Storage keeps this version readable for its job, whatever is PUT to the key meanwhile.
    if (want !== 'find') version.versionId = await this.#hold(version);
    const result = await this.db.writes.run((transaction) => this.#settleIn(transaction, version, origin, want));
    const capture = captureView(result.row, result.job, this.storage.objectUrl(result.row.key));
    // Held for nothing (its job ended already, or none was queued): let it go; a queued job keeps it.
    if (want !== 'find' && !result.enqueued && capture.state !== 'queued' && capture.state !== 'ingesting') {
      await this.storage.release(version.key, { etag: version.etag, versionId: version.versionId }).catch(() => undefined);
    }
    return { capture, queued: ON_ITS_WAY.includes(capture.state), enqueued: result.enqueued, created: result.created };
  }

  async #settleIn(transaction: Transaction, v: Version, origin: Origin, want: Want) {
    const bucket = this.storage.bucket;
    const { row, created } = await captureOnce(
      this.db,
      { bucket, key: v.key, etag: v.etag, size: v.size, rig_id: origin.rigId, project: origin.project, upload_id: origin.uploadId, version_id: v.versionId ?? null },
      transaction,
    );
    let job: Job | null = await captureJob(this.db, row, transaction);
    const state = captureState(job?.state);
    const queueNow = QUEUES_FROM[want].includes(state);
    if (queueNow) job = await this.enqueueIn(transaction, row, v.versionId);
    return { row, job, created, enqueued: queueNow };
  }

  /** Asks storage to keep the version (null: nothing held, e.g. it was overwritten already; the job will say so). */
  async #hold(v: Version): Promise<string | null> {
    try {
      return (await this.storage.hold(v.key, v.etag, v.versionId))?.versionId ?? null;
    } catch (err) {
      this.log.warn('storage could not keep the queued version of a capture', { key: v.key, error: String(err) });
      return null;
    }
  }

  /**
   * A new ingest job for the capture, made its job, in the caller's write transaction: the job runs
   * the whole pipeline again, and its import replaces the capture's rows in one transaction. One
   * fairness group per rig: a rig with many queued captures cannot hold back another's next one.
   */
  async enqueueIn(transaction: Transaction, row: Capture, versionId?: string | null): Promise<Job | null> {
    const group = `rig:${row.rig_id ?? '-'}`;
    const info = await enqueue<CaptureJob>(CAPTURE_JOB, { captureId: row.id }, { transaction, maxAttempts: this.config.ingest.max_attempts, group });
    await setCaptureJob(row, info.id, versionId, transaction);
    return jobById(this.db, info.id, transaction);
  }

  /** The upload that brought this version (else the latest of the key): its rig and project, else the rig's current project. */
  async #origin(key: string, etag: string): Promise<Origin> {
    const upload = await uploadOfVersion(this.db, key, etag);
    if (!upload) return { rigId: null, project: null, uploadId: null };
    let project = upload.project;
    if (!project && upload.rig_id) project = await currentProjectOf(this.db, upload.rig_id);
    return { rigId: upload.rig_id, project, uploadId: upload.id };
  }

  /** Newest first; the state filter reads the job through the join. */
  async list(opts: ListOptions = {}): Promise<CapturePage> {
    if (opts.state !== undefined && !(CAPTURE_STATES as readonly string[]).includes(opts.state)) {
      throw new InvalidInput(`state must be one of ${CAPTURE_STATES.join(', ')}`, [{ field: 'state', message: 'unknown state' }]);
    }
    const filter = {
      ...(opts.state !== undefined ? { jobState: jobStateOf(opts.state as CaptureState) } : {}),
      ...(opts.rig !== undefined ? { rig: opts.rig.toLowerCase() } : {}),
      ...(opts.project !== undefined ? { project: opts.project } : {}),
      ...(opts.before !== undefined ? { before: opts.before } : {}),
    };
    const limit = Math.min(Math.max(opts.limit ?? 50, 1), 500);
    const rows = await capturesWithJobs(this.db, filter, limit + 1);
    const page = rows.slice(0, limit);
    return { captures: page.map((c) => this.view(c)), next_before: rows.length > limit ? page[page.length - 1]!.id : null };
  }

  async get(id: number): Promise<CaptureView> {
    const row = Number.isSafeInteger(id) ? await captureWithJob(this.db, id) : null;
    if (!row) throw new NotFound(`capture ${id}`);
    return this.view(row);
  }

  /** A capture read with its job (`include: 'job'`). */
  view(c: Capture): CaptureView {
    return captureView(c, c.job ?? null, this.storage.objectUrl(c.key));
  }
}
