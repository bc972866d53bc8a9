/**
 * Captures: queueing a stored capture file for ingestion (webhook, storage event, completed upload,
 * `rigd ingest`) and reading captures back. One capture per (bucket, key, etag); the capture row and
 * the job that ingests it commit in one write transaction.
 */
import { Op, type WhereOptions } from 'sequelize';
import type { Config } from '../../config/schema.ts';
import type { Database } from '../../db/index.ts';
import { CAPTURE_STATES, type Capture, type CaptureState } from '../../db/models/capture.ts';
import type { Upload } from '../../db/models/upload.ts';
import { InvalidInput, NotFound } from '../../errors.ts';
import type { CaptureTable } from '../../ingest/capture-file.ts';
import type { CaptureProgress } from '../../ingest/capture-record.ts';
import { CAPTURE_JOB, type CaptureJob } from '../../ingest/ingester.ts';
import { enqueue } from '../../jobs/enqueue.ts';
import type { Logger } from '../../log.ts';
import type { ObjectInfo, ObjectStorage } from '../../storage/contract.ts';
import { keyProblem } from '../../storage/contract.ts';
import { isCaptureKey, normaliseEtag, parseNotice, type NoticedObject, type NoticeSender } from './notice.ts';

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
  tables: CaptureTable[] | null;
  page_size: number | null;
  page_count: number | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface Queued {
  capture: CaptureView;
  /** Waiting for or being ingested (a repeat notice of such a capture queues nothing new). */
  queued: boolean;
  /** This call made the capture (false: it already existed). */
  created: boolean;
}

/** What one object of a storage event came to. */
export interface NoticedOutcome {
  key: string;
  queued: boolean;
  capture: { id: number; state: CaptureState } | null;
  /** Why nothing is queued: object_not_found, capture_ingested, capture_failed. */
  reason?: string;
}

/** The webhook's answer: the seed's url and queued; for a storage event also each object's outcome. */
export interface NoticeResult {
  url: string;
  queued: boolean;
  /** Set when queued is false on a storage event. */
  reason?: string;
  objects?: NoticedOutcome[];
  /** Records that were not the creation of a capture file. */
  ignored?: number;
}

export interface QueueOptions {
  /** Queue a failed capture again (an operator's explicit `rigd ingest`); notices never do. @default false */
  retryFailed?: boolean;
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

function parseJson<T>(text: string | null): T | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export class CaptureService {
  constructor(
    private readonly db: Database,
    private readonly storage: ObjectStorage,
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
    /** Completes upload reservations when a storage event names their object (UploadService.observe). */
    private readonly observeUpload: (key: string, info: ObjectInfo) => Promise<unknown>,
  ) {}

  /**
   * POST /api/v1/webhooks/capture_uploaded: the seed's `{url}` (any sender) or a MinIO event (the
   * webhook token only). Returns what the response echoes. Objects not ours: Unprocessable (never
   * fetched). The seed's `{url}` of an absent object: NotFound; an event's record of an absent
   * object queues nothing and its entry says so. Each object is stat'ed through the storage driver:
   * size and etag never come from the body.
   */
  async notify(body: unknown, sender: NoticeSender): Promise<NoticeResult> {
    const notice = parseNotice(body, this.storage, sender);
    if (notice.kind === 'url') {
      const { queued } = await this.queueObject(notice.objects[0]!);
      return { url: (body as { url: string }).url, queued };
    }
    const objects: NoticedOutcome[] = [];
    for (const o of notice.objects) {
      const info = await this.storage.stat(o.key);
      if (!info) {
        objects.push({ key: o.key, queued: false, capture: null, reason: 'object_not_found' });
        continue;
      }
      const etag = normaliseEtag(info.etag);
      // The event also completes any reservation waiting for this object (MinIO reports before rigd's poll would).
      await this.observeUpload(o.key, { ...info, etag });
      const q = await this.queueObject({ ...o, etag, size: info.size });
      objects.push({
        key: o.key,
        queued: q.queued,
        capture: { id: q.capture.id, state: q.capture.state },
        ...(q.queued ? {} : { reason: `capture_${q.capture.state}` }),
      });
    }
    const queued = objects.length > 0 && objects.every((o) => o.queued);
    const reason = queued ? undefined : (objects.find((o) => !o.queued)?.reason ?? 'no_capture_objects');
    return { url: notice.objects[0]?.url ?? '', queued, ...(reason ? { reason } : {}), objects, ignored: notice.ignored };
  }

  /** `rigd ingest URL|KEY`: an object URL of our storage, or a key in the configured bucket. */
  async queueTarget(target: string, opts: QueueOptions = {}): Promise<Queued> {
    let key = target;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) key = this.storage.parseObjectUrl(target).key;
    const problem = keyProblem(key);
    if (problem !== null) throw new InvalidInput(problem, [{ field: 'key', message: problem }]);
    return this.queueObject({ key, url: this.storage.objectUrl(key) }, opts);
  }

  /** A completed upload of a capture file (auto-enqueue). */
  async onUploaded(upload: Upload): Promise<void> {
    if (!this.config.ingest.auto_enqueue || !isCaptureKey(upload.key) || !upload.etag) return;
    const q = await this.queueObject({ key: upload.key, etag: upload.etag, size: Number(upload.bytes_seen), url: this.storage.objectUrl(upload.key) });
    this.log.info(q.created ? 'capture queued on upload' : 'capture already known', { capture_id: q.capture.id, key: upload.key });
  }

  /** Queues one version of one object, once. Storage is asked for its etag when the notice had none. */
  async queueObject(object: NoticedObject, opts: QueueOptions = {}): Promise<Queued> {
    let { etag, size } = object;
    if (etag === undefined) {
      const info = await this.storage.stat(object.key);
      if (!info) throw new NotFound(`object ${object.key}`, 'object_not_found');
      etag = normaliseEtag(info.etag);
      size = info.size;
    }
    const origin = await this.#origin(object.key, etag);
    const { Capture } = this.db.models;
    const bucket = this.storage.bucket;
    const result = await this.db.writes.run(async (transaction) => {
      const found = await Capture.findOne({ where: { bucket, key: object.key, etag }, transaction });
      if (found && !(opts.retryFailed && found.state === 'failed')) {
        return { row: found, created: false, queued: found.state === 'queued' || found.state === 'ingesting' };
      }
      const row =
        found ??
        (await Capture.create(
          { bucket, key: object.key, etag, size: size ?? null, rig_id: origin.rigId, project: origin.project, upload_id: origin.uploadId },
          { transaction },
        ));
      const job = await enqueue<CaptureJob>(CAPTURE_JOB, { captureId: row.id }, { transaction, maxAttempts: this.config.ingest.max_attempts });
      await row.update(
        { job_id: job.id, state: 'queued', attempts: 0, error_code: null, last_error: null, progress: null, started_at: null, finished_at: null },
        { transaction },
      );
      return { row, created: !found, queued: true };
    });
    return { capture: this.view(result.row), queued: result.queued, created: result.created };
  }

  /** The upload that brought this version (else the latest of the key): its rig and project, else the rig's current project. */
  async #origin(key: string, etag: string): Promise<{ rigId: string | null; project: string | null; uploadId: number | null }> {
    const { Upload, Rig } = this.db.models;
    const upload =
      (await Upload.findOne({ where: { key, etag }, order: [['id', 'DESC']] })) ??
      (await Upload.findOne({ where: { key }, order: [['id', 'DESC']] }));
    if (!upload) return { rigId: null, project: null, uploadId: null };
    let project = upload.project;
    if (!project && upload.rig_id) project = (await Rig.findByPk(upload.rig_id))?.current_project ?? null;
    return { rigId: upload.rig_id, project, uploadId: upload.id };
  }

  async list(opts: ListOptions = {}): Promise<CapturePage> {
    const where: WhereOptions<Capture> = {};
    if (opts.state !== undefined) {
      if (!(CAPTURE_STATES as readonly string[]).includes(opts.state)) {
        throw new InvalidInput(`state must be one of ${CAPTURE_STATES.join(', ')}`, [{ field: 'state', message: 'unknown state' }]);
      }
      Object.assign(where, { state: opts.state });
    }
    if (opts.rig !== undefined) Object.assign(where, { rig_id: opts.rig.toLowerCase() });
    if (opts.project !== undefined) Object.assign(where, { project: opts.project });
    if (opts.before !== undefined) Object.assign(where, { id: { [Op.lt]: opts.before } });
    const limit = Math.min(Math.max(opts.limit ?? 50, 1), 500);
    const rows = await this.db.models.Capture.findAll({ where, order: [['id', 'DESC']], limit: limit + 1 });
    const page = rows.slice(0, limit);
    return { captures: page.map((c) => this.view(c)), next_before: rows.length > limit ? page[page.length - 1]!.id : null };
  }

  async get(id: number): Promise<CaptureView> {
    const row = Number.isSafeInteger(id) ? await this.db.models.Capture.findByPk(id) : null;
    if (!row) throw new NotFound('capture');
    return this.view(row);
  }

  view(c: Capture): CaptureView {
    return {
      id: c.id,
      bucket: c.bucket,
      key: c.key,
      url: this.storage.objectUrl(c.key),
      etag: c.etag,
      size: c.size === null ? null : Number(c.size),
      rig_id: c.rig_id,
      project: c.project,
      upload_id: c.upload_id,
      job_id: c.job_id ?? null,
      state: c.state,
      attempts: c.attempts,
      error_code: c.error_code ?? null,
      last_error: c.last_error ?? null,
      progress: parseJson<CaptureProgress>(c.progress ?? null),
      sha256: c.sha256 ?? null,
      tables: parseJson<CaptureTable[]>(c.tables ?? null),
      page_size: c.page_size ?? null,
      page_count: c.page_count ?? null,
      created_at: c.created_at.toISOString(),
      updated_at: c.updated_at.toISOString(),
      started_at: iso(c.started_at),
      finished_at: iso(c.finished_at),
    };
  }
}
