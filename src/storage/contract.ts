import type { Readable } from 'node:stream';
import { InvalidInput } from '../errors.ts';

/** What storage knows about one stored object. */
export interface ObjectInfo {
  /** Bytes. */
  size: number;
  /**
   * A hash of the content, unquoted: the hex MD5 on MinIO (as S3 reports a single-part upload), the hex
   * SHA-256 on the embedded store. Changes exactly when the content changes; compare, never decode.
   */
  etag: string;
  lastModified: Date;
  /** The Content-Type stored with the object, where the driver reports it (the embedded store does). */
  contentType?: string;
  /** Storage's id of this version (MinIO on a versioned bucket); absent where objects have no versions. */
  versionId?: string | null;
}

/** One version of an object: its etag, and storage's version id where it has one. */
export interface ObjectVersion {
  etag: string;
  versionId?: string | null;
}

/** Where an object URL points: always the configured bucket, and a key that passed {@link validateKey}. */
export interface ObjectRef {
  bucket: string;
  key: string;
}

/** What a signed PUT URL is for, besides its key. */
export interface PresignPutOptions {
  /**
   * Id of the upload reservation the URL is issued for. The embedded store signs it into the URL (query
   * parameter `reservation`) and accepts a PUT to it only with that reservation's size; MinIO knows no
   * reservations and leaves it out.
   */
  reservation?: number;
  /**
   * The exact size the PUT must have. MinIO knows no reservations: its URL signs `content-length`,
   * so MinIO refuses a PUT of any other length (SignatureDoesNotMatch). The embedded store holds a
   * PUT to its reservation's size itself.
   */
  size?: number;
}

/**
 * The one storage contract. Both drivers (embedded disk store, MinIO) implement it; everything above
 * src/storage talks to this and never to a driver's internals, except the embedded store's own HTTP route.
 */
export interface ObjectStorage {
  readonly driver: 'embedded' | 'minio';
  readonly bucket: string;
  /** Creates the bucket when it is missing. Idempotent. */
  ensureBucket(): Promise<void>;
  /** A URL for an HTTP PUT of `key`, signed with AWS SigV4 query parameters, valid `ttlSeconds` (1..604800); see PresignPutOptions. */
  presignPut(key: string, ttlSeconds: number, opts?: PresignPutOptions): Promise<string>;
  /** A URL for an HTTP GET of `key`, signed like {@link presignPut}. */
  presignGet(key: string, ttlSeconds: number): Promise<string>;
  /**
   * Size, etag and time of `key`, or null when there is no such object. With `version`: of that
   * version while it is held (hold()) or current, else of the current object.
   */
  stat(key: string, version?: ObjectVersion): Promise<ObjectInfo | null>;
  /** The content of `key` (of `version`, as stat says) as a stream (never buffered whole). Throws NotFound when absent. */
  read(key: string, version?: ObjectVersion): Promise<Readable>;
  /**
   * Keeps the version of `key` with this etag readable, whatever is PUT to the key later, until
   * release(): the embedded store keeps its content; MinIO answers its version id (a versioned
   * bucket keeps every version; an unversioned one keeps none: versionId null). Null when that
   * version is no longer the current one (nothing is held). With `versionId` (MinIO: the version a
   * storage event named) that version, while it exists with this etag, current or not.
   */
  hold(key: string, etag: string, versionId?: string | null): Promise<{ versionId: string | null } | null>;
  /** Ends a hold (nothing happens when there is none). */
  release(key: string, version: ObjectVersion): Promise<void>;
  /**
   * A held version on local disk (the embedded store), hard-linked to `file` (which must not exist)
   * so that it is read in place instead of copied: content files are never changed in place, so the
   * link is that version for as long as it lives. False when that version is not held here or cannot
   * be linked (another file system); the caller then reads it. Absent on MinIO.
   */
  linkHeld?(key: string, version: ObjectVersion, file: string): Promise<boolean>;
  /** Path-style public URL of `key`: `<public base>/<bucket>/<key>`, each key segment URI-encoded. */
  objectUrl(key: string): string;
  /**
   * Bucket and key of one of OUR object URLs, for the configured bucket. Anything else (other hosts or
   * ports, other buckets, dot segments, empty segments, NUL, encoded slashes or dots, user info) throws
   * Unprocessable with code `not_storage_url`. The URL is never fetched.
   */
  parseObjectUrl(url: string): ObjectRef;
  /** Resolves when storage answers and the bucket is there; throws Unavailable (`storage_unavailable`) otherwise. */
  ping(): Promise<void>;
  /** Whether the configured bucket exists (storage answers and the credentials work, else Unavailable). */
  bucketExists(): Promise<boolean>;
}

/** Longest key MinIO and S3 accept, in bytes of UTF-8. */
export const MAX_KEY_BYTES = 1024;

/** Why `key` breaks MinIO's key rules, or null when it is a valid key. */
export function keyProblem(key: unknown): string | null {
  if (typeof key !== 'string') return 'key must be a string';
  if (key.length === 0) return 'key must not be empty';
  if (key.includes('\0')) return 'key must not contain a NUL character';
  // A lone UTF-16 surrogate has no UTF-8 form (and cannot be URI-encoded).
  if (/\p{Cs}/u.test(key)) return 'key must be valid Unicode text';
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return `key must be at most ${MAX_KEY_BYTES} bytes of UTF-8`;
  if (key.startsWith('/')) return 'key must not start with "/"';
  if (key.endsWith('/')) return 'key must not end with "/"';
  if (key.includes('//')) return 'key must not contain "//" (an empty segment)';
  for (const segment of key.split('/')) {
    if (segment === '.' || segment === '..') return 'key must not contain "." or ".." segments';
  }
  return null;
}

/** Throws InvalidInput (field `key`) saying which of MinIO's key rules `key` breaks. */
export function validateKey(key: string): void {
  const problem = keyProblem(key);
  if (problem !== null) throw new InvalidInput(problem, [{ field: 'key', message: problem }]);
}

/** Throws InvalidInput unless `ttlSeconds` is a whole number of seconds within SigV4's 1 s .. 7 days. */
export function validateTtl(ttlSeconds: number): void {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > 604800) {
    throw new InvalidInput('URL lifetime must be a whole number of seconds from 1 to 604800', [
      { field: 'ttl', message: 'must be 1..604800' },
    ]);
  }
}
