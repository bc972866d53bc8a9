/**
 * What a capture webhook names: the seed's `{url}` body, or a MinIO bucket notification
 * (`Records[].s3.bucket.name`, `Records[].s3.object.key` form-encoded). Both end as keys in the
 * configured bucket, or an error: nothing here fetches anything, and a URL or bucket that is not
 * ours is refused before storage is asked. Size and eTag in an event are never read: what rigd
 * queues comes from its own stat of the object.
 */
import { Forbidden, InvalidInput, TooLarge, Unprocessable } from '../../errors.ts';
import type { ObjectStorage } from '../../storage/contract.ts';
import { keyProblem } from '../../storage/contract.ts';
import { NOT_STORAGE_URL } from '../../storage/urls.ts';

/** Most records one storage event may carry (MinIO sends one per object). */
export const MAX_EVENT_RECORDS = 100;

/** Who sent a notice: a logged-in user, or storage with `ingest.webhook_token`. */
export type NoticeSender = 'user' | 'webhook';

export interface NoticedObject {
  key: string;
  /** Known only from rigd's own records (a completed upload) or a stat; never from a request body. */
  etag?: string;
  size?: number;
  /** What the response echoes: the submitted url, or the object URL of an event's key. */
  url: string;
  /** The version an event is about (MinIO, versioned bucket): stat and queue that one, not the key's current one. */
  versionId?: string;
}

export interface Notice {
  kind: 'url' | 'event';
  /** Objects to queue, in the order named. */
  objects: NoticedObject[];
  /** Records of an event that were not object creations of a capture file. */
  ignored: number;
}

/** Keys that are capture database files (queued from events and completed uploads). */
export function isCaptureKey(key: string): boolean {
  return /\.(sqlite|db)$/i.test(key);
}

/** S3 etags are sent quoted by some clients and unquoted by others. */
export function normaliseEtag(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}

/** MinIO event keys are URL form-encoded: "+" is a space, %XX a byte of UTF-8. */
export function decodeEventKey(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    throw new Unprocessable('event object key has malformed percent-encoding', NOT_STORAGE_URL);
  }
}

interface EventRecord {
  eventName?: unknown;
  s3?: { bucket?: { name?: unknown }; object?: { key?: unknown; versionId?: unknown } };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses a webhook body. Throws InvalidInput (400) for a body that is neither shape, Forbidden (403)
 * for a storage event sent by a user, TooLarge (413) for more than MAX_EVENT_RECORDS records,
 * Unprocessable (422) for objects not ours.
 */
export function parseNotice(body: unknown, storage: Pick<ObjectStorage, 'bucket' | 'parseObjectUrl' | 'objectUrl'>, sender: NoticeSender): Notice {
  if (!isObject(body)) throw new InvalidInput('the body must be a JSON object with "url", or a storage event with "Records"');
  if ('url' in body) {
    if (typeof body.url !== 'string') throw new InvalidInput('"url" must be a string', [{ field: 'url', message: 'must be a string' }]);
    const ref = storage.parseObjectUrl(body.url);
    return { kind: 'url', objects: [{ key: ref.key, url: body.url }], ignored: 0 };
  }
  if (!Array.isArray(body.Records)) {
    throw new InvalidInput('the body must be a JSON object with "url", or a storage event with "Records"', [
      { field: 'url', message: 'is required' },
    ]);
  }
  if (sender !== 'webhook') {
    throw new Forbidden('storage events ("Records") are accepted only with ingest.webhook_token; a user token may send {"url": ...}', 'webhook_token_required');
  }
  if (body.Records.length > MAX_EVENT_RECORDS) {
    throw new TooLarge(`a storage event may carry at most ${MAX_EVENT_RECORDS} records, this one has ${body.Records.length}`, 'too_many_records');
  }
  const objects: NoticedObject[] = [];
  let ignored = 0;
  for (const [i, raw] of (body.Records as unknown[]).entries()) {
    const record = (isObject(raw) ? raw : {}) as EventRecord;
    const bucket = record.s3?.bucket?.name;
    const key = record.s3?.object?.key;
    if (typeof bucket !== 'string' || typeof key !== 'string') {
      throw new InvalidInput(`Records[${i}] has no s3.bucket.name or s3.object.key`, [{ field: `Records.${i}.s3`, message: 'bucket name and object key are required' }]);
    }
    if (bucket !== storage.bucket) throw new Unprocessable(`not an object of this storage: bucket "${bucket}" is not ours`, NOT_STORAGE_URL);
    const decoded = decodeEventKey(key);
    const problem = keyProblem(decoded);
    if (problem !== null) throw new Unprocessable(`not an object of this storage: ${problem}`, NOT_STORAGE_URL);
    const name = typeof record.eventName === 'string' ? record.eventName : '';
    if (!/^(s3:)?ObjectCreated:/.test(name) || !isCaptureKey(decoded)) {
      ignored++;
      continue;
    }
    const versionId = record.s3?.object?.versionId;
    // MinIO names "null" the version of an unversioned write: that is the key's current object.
    const named = typeof versionId === 'string' && /^[\x21-\x7e]{1,1024}$/.test(versionId) && versionId !== 'null' ? { versionId } : {};
    objects.push({ key: decoded, url: storage.objectUrl(decoded), ...named });
  }
  return { kind: 'event', objects, ignored };
}
