import type { Readable } from 'node:stream';
import type { Config } from '../../config/schema.ts';
import { testStopPoint } from '../../config/test-stop.ts';
import { databaseNow } from '../../db/clock.ts';
import type { Batcher, Database, Transaction } from '../../db/index.ts';
import type { Upload, UploadState } from '../../db/models/upload.ts';
import { uploadsWithoutCapture } from '../../db/handover.ts';
import { insertReservations } from '../../db/reservations.ts';
import { completeUpload, liveReservation, newestUploads, uploadsByIds, waitingFor } from '../../db/uploads.ts';
import type { Logger } from '../../log.ts';
import type { ObjectInfo } from '../../storage/contract.ts';
import type { Storage } from '../../storage/index.ts';
import { S3Error } from '../../storage/s3-error.ts';
import type { RecordIdentityEvent } from '../rigs/identity-events.ts';
import { UploadProgress } from './progress.ts';
import { ReservationGate, uploaderOf, type Refusal } from './reservation-gate.ts';
import { parseUploadRequest } from './rules.ts';

export type { ReceivedPut, Reservation, RigDirectory, UploadedListener, UploadView } from './types.ts';
import type { ReceivedPut, Reservation, RigDirectory, UploadedListener, UploadView } from './types.ts';

interface NewUpload {
  rigId: string | null;
  peer: string;
  key: string;
  size: number;
  project: string | null;
  /** Seconds the reservation (and its URL) stays valid, from the reservation's time. */
  ttlS: number;
  /** An object with this key exists now. */
  exists: boolean;
}

/**
 * Whether `info` can be the object PUT through `upload`'s URL: written after the reservation was made
 * (storage times are whole seconds, hence the second's grace). An older object of the same size (the
 * one the key held already, named again by a repeated storage event) is not.
 */
export function writtenSince(info: ObjectInfo, upload: Upload): boolean {
  return info.lastModified.getTime() >= upload.created_at.getTime() - 1000;
}

export class UploadService {
  readonly progress: UploadProgress;
  readonly #listeners: UploadedListener[] = [];
  readonly #create: Batcher<NewUpload, number | Refusal>;
  readonly #gate: ReservationGate;
  readonly #events: RecordIdentityEvent;

  constructor(
    private readonly db: Database,
    private readonly storage: Storage,
    private readonly rigs: RigDirectory,
    private readonly config: Readonly<Config>,
    private readonly log: Logger,
    /** Where key and quota refusals are recorded. @default nowhere */
    events: RecordIdentityEvent = () => undefined,
  ) {
    this.progress = new UploadProgress(db);
    this.#gate = new ReservationGate(db, config);
    this.#events = events;
    // Reservations are hot (every rig asks before every file): group-committed like reports.
    this.#create = db.writes.batcher((items, t) => this.#insertBatch(items, t));
  }

  /**
   * One transaction for a batch of reservations: judged (key owner, per-rig bounds, free space), then
   * the rigs' current projects and one multi-row INSERT of those accepted. Its times (reserved at, URL
   * expiry, first check) are the database's clock: PostgreSQL's now(), SQLite: this host's.
   */
  async #insertBatch(all: NewUpload[], t: Transaction): Promise<(number | Refusal)[]> {
    const now = await databaseNow(this.db, t);
    const verdicts = await this.#gate.judge(
      all.map((item) => ({ uploader: uploaderOf(item.rigId, item.peer), peer: item.peer, key: item.key, size: item.size, exists: item.exists })),
      t,
      now,
    );
    const items = all.filter((_item, i) => verdicts[i] === null);
    for (const item of items) {
      if (item.rigId && item.project) await this.rigs.setCurrentProject(item.rigId, item.project, t);
    }
    const rows = items.map((item) => ({
      rig_id: item.rigId,
      peer_address: item.peer,
      key: item.key,
      expected_size: item.size,
      project: item.project,
      url_expires_at: new Date(now.getTime() + item.ttlS * 1000),
      next_check_at: this.storage.driver === 'embedded' ? null : now,
    }));
    const ids = rows.length > 0 ? await insertReservations(this.db, rows, t, now) : [];
    let next = 0;
    return verdicts.map((v) => v ?? ids[next++]!);
  }

  /** Runs after an upload is stored (embedded PUT, storage poll, or storage event). */
  onUploaded(listener: UploadedListener): void {
    this.#listeners.push(listener);
  }

  /**
   * GET /api/v1/rigs/upload: records that the rig at `peer` will upload `key` of `size` bytes and
   * returns a signed PUT URL, even when the object exists (so it can be overwritten).
   */
  async reserve(query: { key?: unknown; size?: unknown; project?: unknown }, peer: string): Promise<Reservation> {
    const req = parseUploadRequest(query, this.config.storage.max_upload_size);
    const ttl = this.config.storage.upload_url_ttl;
    const [existing, rigId] = await Promise.all([this.storage.stat(req.key), this.rigs.findByVpnAddress(peer)]);
    const id = await this.#create.submit({
      rigId,
      peer,
      key: req.key,
      size: req.size,
      project: req.project,
      ttlS: ttl,
      exists: existing !== null,
    });
    if (typeof id !== 'number') {
      this.#events(id.event.kind, id.event.details);
      throw id.error;
    }
    // The URL names its reservation: the embedded store takes only that reservation's size through it.
    // Its X-Amz-Date is this node's clock (SigV4; checked by this node's or MinIO's clock): it and
    // the stored expiry (the database's clock) both run ttl seconds from now, so they end together.
    // MinIO's URL also signs the size, so that MinIO takes no other length (it knows no reservations).
    const url = await this.storage.presignPut(req.key, ttl, { reservation: id, size: req.size });
    return {
      success: true,
      url,
      exists: existing !== null && existing.size === req.size,
      size: existing ? existing.size : null,
      id,
    };
  }

  /**
   * The reservation a signed PUT for `key` belongs to, while its URL is valid: the one the URL names,
   * or (a URL that names none, issued by an earlier version) the newest one, of `size` when given.
   * Valid means unexpired by the database's clock, the clock the expiry was stored by.
   */
  reservationFor(key: string, named?: number, size?: number): Promise<Upload | null> {
    return liveReservation(this.db, key, { named, size });
  }

  /**
   * The embedded store's PUT: streams `body` into storage, refusing any length but the reserved
   * size (a Content-Length that says otherwise before a byte is read), with progress visible while
   * bytes arrive. The signature was checked by the caller.
   */
  async receive(key: string, body: Readable, put: ReceivedPut = {}): Promise<ObjectInfo> {
    const store = this.storage;
    // The object routes exist only with the embedded store.
    if (store.driver !== 'embedded') throw new Error('receive() needs the embedded store');
    const named = put.reservation === undefined ? undefined : Number(put.reservation);
    if (named !== undefined && !Number.isSafeInteger(named)) throw new S3Error('AccessDenied', 'The URL names no valid upload reservation');
    const upload = await this.reservationFor(key, named, put.contentLength);
    if (!upload) {
      throw new S3Error(
        'AccessDenied',
        named === undefined
          ? 'No upload is reserved for this key; ask GET /api/v1/rigs/upload first'
          : 'The upload reservation of this URL has expired; ask GET /api/v1/rigs/upload again',
      );
    }
    const reserved = Number(upload.expected_size);
    if (put.contentLength !== undefined && put.contentLength !== reserved) {
      const message = `This URL is for an upload of exactly ${reserved} bytes (the reserved size); the request's Content-Length is ${put.contentLength}`;
      throw new S3Error(put.contentLength > reserved ? 'EntityTooLarge' : 'EntityTooSmall', message);
    }
    // The disk filled since the reservation: refused before a byte is read, as MinIO does.
    const room = await this.#gate.roomFor(reserved);
    if (!room.ok) throw new S3Error('XMinioStorageFull', `Storing ${reserved} bytes would leave less than ${room.floorMiB} MiB free on the gateway; retry later.`);
    this.progress.set(upload.id, 0);
    try {
      const info = await store.putObject(key, body, {
        expectedSize: reserved,
        contentType: put.contentType,
        signal: put.signal,
        onProgress: (bytes) => this.progress.set(upload.id, bytes),
        // A refused body must not destroy the request's socket: the client still reads its S3
        // error (the route drains the rest).
        leaveSourceOnError: true,
      });
      await this.#complete(upload, info);
      return info;
    } finally {
      await this.progress.done(upload.id);
    }
  }

  /**
   * Storage says `key` now holds `info` (a poll or a storage event): completes the reservations of
   * that key waiting for that size and made before it was written. Returns the uploads completed.
   */
  async observe(key: string, info: ObjectInfo): Promise<Upload[]> {
    const waiting = (await waitingFor(this.db, key, info.size)).filter((upload) => writtenSince(info, upload));
    for (const upload of waiting) await this.#complete(upload, info);
    return waiting;
  }

  async #complete(upload: Upload, info: ObjectInfo): Promise<void> {
    const done = await completeUpload(this.db, upload, info);
    if (done === 0 && upload.etag === info.etag) return;
    // Stored, not yet handed over (a second transaction): a process that dies here leaves an
    // upload without its capture, which recoverHandOvers() hands over at the next start.
    testStopPoint('upload-handover');
    await this.#handOver(upload);
  }

  async #handOver(upload: Upload): Promise<void> {
    for (const listener of this.#listeners) {
      try {
        await listener(upload);
      } catch (err) {
        this.log.error('upload listener failed', { upload_id: upload.id, key: upload.key, error: String(err) });
      }
    }
  }

  /**
   * At start: uploads stored but never handed over (the process died between the two steps) are
   * handed over now, oldest first. Idempotent: a capture of that version is found, not made twice.
   */
  async recoverHandOvers(): Promise<number> {
    let recovered = 0;
    for (let after = 0; ; ) {
      const ids = await uploadsWithoutCapture(this.db, after, 100);
      if (ids.length > 0) after = ids[ids.length - 1]!;
      const rows = await uploadsByIds(this.db, ids);
      for (const upload of rows) {
        this.log.warn('an upload stored before a restart had no capture; handing it over now', { upload_id: upload.id, key: upload.key });
        await this.#handOver(upload);
        recovered++;
      }
      if (ids.length < 100) return recovered;
    }
  }

  async list(opts: { limit?: number; state?: UploadState } = {}): Promise<UploadView[]> {
    const rows = await newestUploads(this.db, { state: opts.state, limit: Math.min(Math.max(opts.limit ?? 50, 1), 1000) });
    return rows.map((u) => this.view(u));
  }

  view(u: Upload): UploadView {
    return {
      id: u.id,
      rig_id: u.rig_id,
      key: u.key,
      project: u.project,
      state: u.state,
      size: Number(u.expected_size),
      bytes_seen: this.progress.get(u.id) ?? Number(u.bytes_seen),
      etag: u.etag,
      created_at: u.created_at.toISOString(),
      url_expires_at: u.url_expires_at.toISOString(),
      completed_at: u.completed_at ? u.completed_at.toISOString() : null,
    };
  }
}
