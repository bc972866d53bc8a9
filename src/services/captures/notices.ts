/**
 * POST /api/v1/webhooks/capture_uploaded above uploads and captures: for each object a notice names,
 * stat it through the storage driver (size and etag never come from the body), let uploads observe
 * it (a storage event completes a waiting reservation, which hands the capture over), then ask
 * captures to queue that version. Uploads and captures never call each other back.
 *
 * `queued` is true when the object version's capture is queued, being ingested, or ingested (a repeat
 * notice included); false only when nothing is or will be ingested, with a reason.
 */
import type { CaptureState } from '../../db/models/capture.ts';
import { NotFound } from '../../errors.ts';
import type { ObjectInfo, ObjectStorage } from '../../storage/contract.ts';
import { isCaptureKey, normaliseEtag, parseNotice, type NoticedObject, type NoticeSender } from './notice.ts';
import type { CaptureService } from './service.ts';

/** Why nothing is queued for an object. */
export type NotQueuedReason = 'object_not_found' | 'not_a_capture_file' | 'no_capture_objects' | `capture_${CaptureState}`;

export interface CaptureRef {
  id: number;
  state: CaptureState;
}

/** What one object of a notice came to. */
export interface NoticedOutcome {
  key: string;
  queued: boolean;
  capture: CaptureRef | null;
  reason?: NotQueuedReason;
}

/** The webhook's answer: the seed's url and queued, the capture; for a storage event also each object's outcome. */
export interface NoticeResult {
  url: string;
  queued: boolean;
  /** The capture of the (first) object named; null when there is none. */
  capture: CaptureRef | null;
  /** Set when queued is false. */
  reason?: NotQueuedReason;
  objects?: NoticedOutcome[];
  /** Records that were not the creation of a capture file. */
  ignored?: number;
}

/** The part of UploadService a notice uses: storage says `key` now holds `info`. */
export interface UploadObserver {
  observe(key: string, info: ObjectInfo): Promise<unknown>;
}

export class CaptureNotices {
  constructor(
    private readonly storage: ObjectStorage,
    private readonly uploads: UploadObserver,
    private readonly captures: CaptureService,
  ) {}

  /**
   * The seed's `{url}` (any sender) or a MinIO event (the webhook token only). Objects not ours:
   * Unprocessable (never fetched). The seed's `{url}` of an absent object: NotFound object_not_found;
   * an event's record of an absent object queues nothing and its entry says so.
   */
  async notify(body: unknown, sender: NoticeSender): Promise<NoticeResult> {
    const notice = parseNotice(body, this.storage, sender);
    if (notice.kind === 'url') {
      const object = notice.objects[0]!;
      const outcome = await this.#object(object);
      if (outcome.reason === 'object_not_found') throw new NotFound(`object ${object.key}`, 'object_not_found');
      return { url: (body as { url: string }).url, ...this.#summary([outcome]) };
    }
    const objects: NoticedOutcome[] = [];
    for (const o of notice.objects) objects.push(await this.#object(o));
    return { url: notice.objects[0]?.url ?? '', ...this.#summary(objects), objects, ignored: notice.ignored };
  }

  async #object(o: NoticedObject): Promise<NoticedOutcome> {
    if (!isCaptureKey(o.key)) return { key: o.key, queued: false, capture: null, reason: 'not_a_capture_file' };
    // The version an event names (stat checks it is still there), else the current object.
    const info = await this.storage.stat(o.key, o.versionId ? { etag: '', versionId: o.versionId } : undefined);
    if (!info) return { key: o.key, queued: false, capture: null, reason: 'object_not_found' };
    const etag = normaliseEtag(info.etag);
    // A reservation waiting for this object completes now (MinIO reports before rigd's poll would).
    await this.uploads.observe(o.key, { ...info, etag });
    const q = await this.captures.queueObject({ ...o, etag, size: info.size, ...(info.versionId ? { versionId: info.versionId } : {}) });
    const capture = { id: q.capture.id, state: q.capture.state };
    return { key: o.key, queued: q.queued, capture, ...(q.queued ? {} : { reason: `capture_${q.capture.state}` as const }) };
  }

  #summary(objects: NoticedOutcome[]): Pick<NoticeResult, 'queued' | 'capture' | 'reason'> {
    const queued = objects.length > 0 && objects.every((o) => o.queued);
    const reason = queued ? undefined : (objects.find((o) => !o.queued)?.reason ?? 'no_capture_objects');
    return { queued, capture: objects[0]?.capture ?? null, ...(reason ? { reason } : {}) };
  }
}
